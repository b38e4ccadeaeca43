"""ShareFetch v1-2 (KIP-932): a share group member's records, each acquired for it alone
until it acknowledges them or its lock expires, plus the acknowledgements it piggybacks.

The member's share session (epoch 0 opens it, -1 closes it) holds the partitions it
fetches; a request waits up to ``max_wait_ms`` until some partition has records to hand
out. v2's record-limit acquire mode hands out exactly ``max_records``; its renew-only
requests (``is_renew_ack``) fetch nothing.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.protocol.leader_hints import CurrentLeader
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.handlers.share_sessions import (
    ShareTarget,
    acknowledge,
    acknowledgements,
    check_group,
    failed,
    leader_of,
    release,
    session_for,
    targets,
)
from odradek.broker.server.leader_locator import leader_endpoints
from odradek.broker.share.share_partition_manager import Acquired
from odradek.broker.share.share_sessions import CLOSE_EPOCH, OPEN_EPOCH

RECORD_LIMIT_MODE = 1
Item = tuple[uuid.UUID, int]


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    lock_ms = 0
    try:
        check_group(context, request)
        lock_ms = context.shares.settings(body.group_id).record_lock_duration_ms
        acked = acknowledgements(body.topics)
        if body.share_session_epoch == OPEN_EPOCH and acked:
            raise KafkaError(
                ErrorCode.invalid_request, "a share session's first request acknowledges nothing"
            )
        session = session_for(context, request)
        named = [(t.topic_id, p.partition_index) for t in body.topics for p in t.partitions]
        forgotten = [(t.topic_id, p) for t in body.forgotten_topics_data for p in t.partitions]
        if body.share_session_epoch != CLOSE_EPOCH:
            session.update(named, forgotten)
        resolved = targets(context, request, [*session.partitions, *named])
        ack_results = await acknowledge(context, body.member_id, acked, resolved)
        fetched: dict[Item, Acquired | tuple[ErrorCode, str | None]] = {}
        if body.share_session_epoch == CLOSE_EPOCH:
            release(context, session)
        elif not getattr(body, "is_renew_ack", False):
            wanted = {item: resolved[item] for item in session.partitions}
            fetched = await _fetch(context, request, wanted)
    except Exception as error:  # a request-level failure: the whole answer is this error
        return failed(error, lock_ms)
    every = body.share_session_epoch == OPEN_EPOCH
    return _response(context, request, resolved, fetched, ack_results, lock_ms, every)


async def _fetch(
    context: BrokerContext, request: Request, wanted: Mapping[Item, ShareTarget]
) -> dict[Item, Acquired | tuple[ErrorCode, str | None]]:
    """Acquire records from the session's partitions, waiting up to max_wait_ms for some."""
    body = request.body
    shares = context.shares.partitions
    exact = getattr(body, "share_acquire_mode", 0) == RECORD_LIMIT_MODE
    loop = asyncio.get_running_loop()
    deadline = loop.time() + body.max_wait.total_seconds()
    while True:
        results: dict[Item, Acquired | tuple[ErrorCode, str | None]] = {}
        records = max(body.max_records, 1)
        budget = min(body.max_bytes, shares.config.fetch_max_bytes)
        for item, target in wanted.items():
            try:
                topic = target.check()
                if records <= 0 or budget <= 0:
                    continue
                got = await shares.acquire(
                    target.key, topic, body.member_id, records, budget, exact
                )
            except Exception as error:  # every failure becomes this partition's error
                results[item] = error_of(error)
                continue
            if got.ranges:
                results[item] = got
                records -= got.record_count
                budget -= len(got.records)
        remaining = deadline - loop.time()
        if results or remaining <= 0:
            return results
        waiters = shares.change_waiters(
            (target.key, target.topic) for target in wanted.values() if target.topic is not None
        )
        if not waiters:
            return results
        context.requests.leave(request.connection_id)  # Kafka's share fetch purgatory
        await asyncio.wait(waiters, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)


def _response(
    context: BrokerContext,
    request: Request,
    resolved: Mapping[Item, ShareTarget],
    fetched: Mapping[Item, Acquired | tuple[ErrorCode, str | None]],
    ack_results: Mapping[Item, tuple[ErrorCode, str | None]],
    lock_ms: int,
    every: bool,
) -> dict[str, Any]:
    """Partitions with records, errors or acknowledgement results (all of them when the
    session was just opened), grouped by topic."""
    topics: dict[uuid.UUID, list[dict[str, Any]]] = {}
    leaders: list[CurrentLeader] = []
    items = resolved if every else [*fetched, *(i for i in ack_results if i not in fetched)]
    for item in items:
        target = resolved[item]
        got = fetched.get(item)
        code, message = got if isinstance(got, tuple) else (ErrorCode.none, None)
        ack_code, ack_message = ack_results.get(item, (ErrorCode.none, None))
        leader = leader_of(context, target, code if code is not ErrorCode.none else ack_code)
        if leader["leader_id"] >= 0:
            leaders.append(CurrentLeader(leader["leader_id"], leader["leader_epoch"]))
        acquired = got if isinstance(got, Acquired) else None
        topics.setdefault(item[0], []).append(
            {
                "partition_index": item[1],
                "error_code": code,
                "error_message": message,
                "acknowledge_error_code": ack_code,
                "acknowledge_error_message": ack_message,
                "current_leader": leader,
                "records": acquired.records if acquired else b"",
                "acquired_records": [
                    {
                        "first_offset": r.first_offset,
                        "last_offset": r.last_offset,
                        "delivery_count": r.delivery_count,
                    }
                    for r in (acquired.ranges if acquired else [])
                ],
            }
        )
    endpoints = leader_endpoints(context.store.image, leaders, request.listener_name)
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "acquisition_lock_timeout": lock_ms,
        "responses": [
            {"topic_id": topic_id, "partitions": partitions}
            for topic_id, partitions in topics.items()
        ],
        "node_endpoints": [
            {"node_id": e.node_id, "host": e.host, "port": e.port, "rack": e.rack}
            for e in endpoints
        ],
    }
