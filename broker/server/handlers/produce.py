"""Produce: append record batches to partition leaders."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

_VALID_ACKS = (-1, 0, 1)


async def handle(context: BrokerContext, request: Request) -> dict[str, Any] | None:
    body = request.body
    acks = body.acks
    responses = []
    commits = []
    for topic_data in body.topic_data:
        partitions = []
        for item in topic_data.partition_data:
            result = _append(context, topic_data.name, item.index, item.records, acks)
            partitions.append(result)
            if acks == -1 and result["error_code"] is ErrorCode.none:
                commits.append(_await_commit(context, topic_data.name, result, body.timeout))
        responses.append({"name": topic_data.name, "partition_responses": partitions})
    # acks=all: answer once the high watermark passed every batch (or time ran out).
    await asyncio.gather(*commits)
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time": 0}


async def _await_commit(
    context: BrokerContext, topic: str, result: dict[str, Any], timeout: timedelta
) -> None:
    try:
        partition = context.replicas.get(topic, result["index"])
        await partition.wait_for_high_watermark(result["last_offset"] + 1, timeout.total_seconds())
    except KafkaError as error:
        result.update(error_code=error.code, error_message=error.message, base_offset=-1)


def _append(
    context: BrokerContext, topic_name: str, index: int, records: bytes | None, acks: int
) -> dict[str, Any]:
    try:
        if acks not in _VALID_ACKS:
            raise KafkaError(ErrorCode.invalid_required_acks, f"acks={acks} is not -1, 0 or 1")
        if _is_transactional(records):
            raise KafkaError(
                ErrorCode.transactional_id_authorization_failed,
                "transactions are not supported yet",
            )
        topic = context.store.image.topics.get(topic_name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        partition = context.replicas.get(topic_name, index)
        config = context.topic_config(topic)
        if not records:
            raise KafkaError(ErrorCode.corrupt_message, "empty records")
        info = partition.append_as_leader(records, acks, config.get_int("min.insync.replicas"))
    except Exception as error:  # every failure becomes this partition's error code
        code, message = error_of(error)
        return {"index": index, "error_code": code, "base_offset": -1, "log_append_time": -1,
                "log_start_offset": -1, "record_errors": (), "error_message": message}  # fmt: skip
    if not info.duplicate:
        context.metrics.bytes_in.labels(topic_name).inc(len(records))
        context.metrics.records_in.labels(topic_name).inc(info.last_offset - info.first_offset + 1)
    return {
        "index": index,
        "error_code": ErrorCode.none,
        "base_offset": info.first_offset,
        "log_append_time": info.log_append_time,
        "log_start_offset": info.log_start_offset,
        "record_errors": (),
        "error_message": None,
        "last_offset": info.last_offset,  # not a response field: what acks=all waits for
    }


def _is_transactional(records: bytes | None) -> bool:
    # Bit 4 of the first batch's attributes; transactions come in a later issue.
    return records is not None and len(records) > 22 and bool(records[22] & 0x10)
