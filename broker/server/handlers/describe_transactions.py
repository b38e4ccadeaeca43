"""DescribeTransactions v0: the state of transactional ids this broker coordinates
(DESCRIBE on each), as `kafka-transactions describe` shows it."""

from __future__ import annotations

import datetime
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext


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
    except KafkaError as error:
        return {
            "error_code": error.code,
            "transactional_id": transactional_id,
            "transaction_state": "",
            "transaction_timeout": datetime.timedelta(0),
            "transaction_start_time": None,
            "producer_id": -1,
            "producer_epoch": -1,
            "topics": [],
        }
    started = (
        datetime.datetime.fromtimestamp(found.start_ms / 1000, datetime.UTC)
        if found.start_ms >= 0
        else None
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
        ],
    }
