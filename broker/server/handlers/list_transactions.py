"""ListTransactions v0-1: the transactional ids this broker coordinates that the sender may
describe, filtered by state, producer id and (v1) how long they have been running, as
`kafka-transactions list` shows them."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.transaction.transaction_log_format import TransactionState

KNOWN_STATES = {state.kafka_name for state in TransactionState}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    states = set(body.state_filters)
    producers = set(body.producer_id_filters)
    min_duration_ms = getattr(body, "duration_filter", -1)
    now_ms = context.transactions.now_ms()
    try:
        found = context.transactions.list_transactions()
    except KafkaError as error:
        return {"throttle_time": 0, "error_code": error.code, "unknown_state_filters": [],
                "transaction_states": []}  # fmt: skip
    listed = [
        t
        for t in found
        if (not states or t.state.kafka_name in states)
        and (not producers or t.producer_id in producers)
        and (min_duration_ms < 0 or (t.start_ms >= 0 and now_ms - t.start_ms >= min_duration_ms))
    ]
    describable = context.authorization.allowed_names(
        request,
        AclOperation.DESCRIBE,
        ResourceType.TRANSACTIONAL_ID,
        (t.transactional_id for t in listed),
    )
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "unknown_state_filters": sorted(states - KNOWN_STATES),
        "transaction_states": [
            {
                "transactional_id": t.transactional_id,
                "producer_id": t.producer_id,
                "transaction_state": t.state.kafka_name,
            }
            for t in listed
            if t.transactional_id in describable
        ],
    }
