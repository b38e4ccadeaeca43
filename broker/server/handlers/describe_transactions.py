"""DescribeTransactions v0: the state of transactional ids this broker coordinates
(DESCRIBE on each), as `kafka-transactions describe` shows it; of a transaction's partitions,
only those of topics the sender may describe are shown, as Kafka does."""

from __future__ import annotations

import datetime
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext

# Kafka's -1 ms, "no transaction running": the field is not nullable, so None cannot say it
NO_START_TIME = datetime.datetime.fromtimestamp(-1 / 1000, datetime.UTC)
EPOCH = datetime.datetime.fromtimestamp(0, datetime.UTC)


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "transaction_states": [
            _describe(context, request, transactional_id)
            for transactional_id in request.body.transactional_ids
        ],
    }


def _describe(context: BrokerContext, request: Request, transactional_id: str) -> dict[str, Any]:
    try:
        context.authorization.check(
            request, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id
        )
        found = context.transactions.describe(transactional_id)
    except KafkaError as error:  # the other fields keep their defaults, as Kafka sends them
        return {
            "error_code": error.code,
            "transactional_id": transactional_id,
            "transaction_state": "",
            "transaction_timeout": datetime.timedelta(0),
            "transaction_start_time": EPOCH,
            "producer_id": 0,
            "producer_epoch": 0,
            "topics": [],
        }
    describable = context.authorization.allowed_names(
        request, AclOperation.DESCRIBE, ResourceType.TOPIC, found.partitions
    )
    started = (
        datetime.datetime.fromtimestamp(found.start_ms / 1000, datetime.UTC)
        if found.start_ms >= 0
        else NO_START_TIME
    )
    return {
        "error_code": ErrorCode.none,
        "transactional_id": transactional_id,
        "transaction_state": found.state.kafka_name,
        "transaction_timeout": datetime.timedelta(milliseconds=found.timeout_ms),
        "transaction_start_time": started,
        "producer_id": found.producer_id,
        "producer_epoch": found.producer_epoch,
        "topics": [
            {"topic": topic, "partitions": sorted(partitions)}
            for topic, partitions in sorted(found.partitions.items())
            if topic in describable
        ],
    }
