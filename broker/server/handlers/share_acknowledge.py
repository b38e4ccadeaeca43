"""ShareAcknowledge v1-2 (KIP-932): a share group member's acknowledgements without a
fetch, in its share session (epoch -1 acknowledges and closes the session)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.share_sessions import (
    acknowledge,
    acknowledgements,
    check_group,
    failed,
    leader_of,
    release,
    session_for,
    targets,
)
from odradek.broker.share.share_sessions import CLOSE_EPOCH, OPEN_EPOCH


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    lock_ms = 0
    try:
        check_group(context, request)
        lock_ms = context.shares.settings(body.group_id).record_lock_duration_ms
        if body.share_session_epoch == OPEN_EPOCH:
            raise KafkaError(
                ErrorCode.invalid_share_session_epoch,
                "ShareAcknowledge cannot open a share session",
            )
        acked = acknowledgements(body.topics)
        session = session_for(context, request)
        resolved = targets(context, request, acked)
        results = await acknowledge(context, body.member_id, acked, resolved)
        if body.share_session_epoch == CLOSE_EPOCH:
            release(context, session)
    except Exception as error:  # a request-level failure: the whole answer is this error
        return failed(error, lock_ms)
    topics: dict[Any, list[dict[str, Any]]] = {}
    for item, (code, message) in results.items():
        topics.setdefault(item[0], []).append(
            {
                "partition_index": item[1],
                "error_code": code,
                "error_message": message,
                "current_leader": leader_of(context, resolved[item], code),
            }
        )
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "acquisition_lock_timeout": lock_ms,
        "responses": [{"topic_id": t, "partitions": p} for t, p in topics.items()],
        "node_endpoints": [],
    }
