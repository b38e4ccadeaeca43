"""Produce: append record batches to partition leaders (WRITE on each topic; with a
transactional id, WRITE on it too, else the whole request is refused, as Kafka does)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from odradek.broker.cluster.partition import Verification, VerificationGuard
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.protocol.produce_response import (
    TOPIC_IDS_FROM,
    ProducedPartition,
    ProducedTopic,
    encode_produce_response,
)
from odradek.broker.protocol.records import read_header
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.client_quota_manager import QuotaType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.handlers.types import EncodedResponse
from odradek.broker.server.leader_locator import current_leader, leader_endpoints
from odradek.broker.transaction.verification import TransactionCheck

_VALID_ACKS = (-1, 0, 1)
ABORTABLE_FROM = 11  # TRANSACTION_ABORTABLE reaches the client as is (KIP-890)
ADDS_PARTITIONS_FROM = 12  # transaction version 2: the leader adds the partition


async def handle(context: BrokerContext, request: Request) -> EncodedResponse | None:
    body = request.body
    version = request.header.api_version
    acks = body.acks
    image = context.store.image
    topics: list[ProducedTopic] = []
    commits = []
    by_id = version >= TOPIC_IDS_FROM  # KIP-516
    names = [image.topic_name(t.topic_id) if by_id else t.name for t in body.topic_data]
    writable = context.authorization.allowed_names(
        request, AclOperation.WRITE, ResourceType.TOPIC, names
    )
    transactional_id = getattr(body, "transactional_id", None)  # v3+
    if transactional_id is not None and not context.authorization.allowed_names(
        request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, [transactional_id]
    ):
        writable = set()  # Kafka refuses the whole request, every partition with this code
        refusal: ErrorCode = ErrorCode.transactional_id_authorization_failed
    else:
        refusal = ErrorCode.topic_authorization_failed
    verifications = await _verify_transactions(
        context,
        transactional_id,
        TransactionCheck.for_version(version, ABORTABLE_FROM, ADDS_PARTITIONS_FROM),
        [
            (name, item.index, item.records)
            for topic_data, name in zip(body.topic_data, names, strict=True)
            if name in writable
            for item in topic_data.partition_data
        ],
    )
    for topic_data, name in zip(body.topic_data, names, strict=True):
        topic = ProducedTopic(name or "", [], topic_data.topic_id if by_id else None)
        for item in topic_data.partition_data:
            verification = verifications.get((name or "", item.index))
            produced, last_offset = _append(
                context,
                name,
                item.index,
                item.records,
                acks,
                None if name in writable else refusal,
                verification,
            )
            if acks == -1 and produced.error_code == ErrorCode.none:
                commits.append(
                    _await_commit(
                        context,
                        topic.name,
                        topic.partitions,
                        len(topic.partitions),
                        last_offset,
                        body.timeout,
                    )
                )
            topic.partitions.append(produced)
        topics.append(topic)
    # acks=all: answer once the high watermark passed every batch (or time ran out),
    # waiting outside queued.max.requests as in Kafka's produce purgatory.
    if commits:
        context.requests.leave(request.connection_id)
        await asyncio.gather(*commits)
    throttle_ms = context.quotas.record(
        QuotaType.PRODUCE, request.principal, request.header.client_id, request.size
    )
    if acks == 0:  # no response; a throttle only mutes the connection
        return EncodedResponse((), throttle_ms) if throttle_ms else None
    leaders = (partition.current_leader for topic in topics for partition in topic.partitions)
    endpoints = leader_endpoints(context.store.image, leaders, request.listener_name)
    encoded = encode_produce_response(version, topics, throttle_ms, node_endpoints=endpoints)
    return EncodedResponse([encoded], throttle_ms)


async def _verify_transactions(
    context: BrokerContext,
    transactional_id: str | None,
    check: TransactionCheck,
    batches: list[tuple[str | None, int, bytes | None]],
) -> dict[tuple[str, int], Verification | ErrorCode]:
    """KIP-890, for transaction version 2 requests always, for older ones while
    ``transaction.partition.verification.enable``: for every partition of a transactional
    request, its guard once the coordinator confirmed (or added) the partition in the
    transaction of a batch that would open one there, or the coordinator's refusal; the
    other partitions get an empty Verification, which refuses a batch that turns out to
    open one after all."""
    if transactional_id is None or (
        check is not TransactionCheck.ADD
        and not context.config.get_bool("transaction.partition.verification.enable")
    ):
        return {}
    verifications: dict[tuple[str, int], Verification | ErrorCode] = {}
    # by producer (id, epoch): the partitions its batches would open a transaction in
    to_verify: dict[tuple[int, int], dict[tuple[str, int], VerificationGuard]] = {}
    for name, index, records in batches:
        if name is None:
            continue
        verifications[(name, index)] = Verification()
        if not records:
            continue  # the append answers why
        try:
            partition = context.replicas.get(name, index)
            opener = partition.transaction_to_verify(records)
        except KafkaError:
            continue
        if opener is not None:
            guard = partition.verification_guard(
                *opener, check is TransactionCheck.ADD, read_header(records).base_sequence
            )
            to_verify.setdefault(opener, {})[(name, index)] = guard
    for producer, guards in to_verify.items():
        codes = await context.verifier.verify(transactional_id, producer, list(guards), check)
        for key, guard in guards.items():
            code = codes.get(key, ErrorCode.invalid_txn_state)
            verifications[key] = Verification(guard) if code is ErrorCode.none else code
    return verifications


async def _await_commit(
    context: BrokerContext,
    topic: str,
    partitions: list[ProducedPartition],
    position: int,
    last_offset: int,
    timeout: timedelta,
) -> None:
    """Wait until ``last_offset`` is committed; on failure ``partitions[position]`` says why."""
    produced = partitions[position]
    try:
        partition = context.replicas.get(topic, produced.index)
        await partition.wait_for_high_watermark(last_offset + 1, timeout.total_seconds())
        partition.check_enough_replicas_after_append(context.min_insync(topic))
    except KafkaError as error:
        leader = current_leader(context.store.image, topic, produced.index, error.code)
        partitions[position] = ProducedPartition(
            produced.index, error.code, error_message=error.message, current_leader=leader
        )


def _append(
    context: BrokerContext,
    topic_name: str | None,
    index: int,
    records: bytes | None,
    acks: int,
    refusal: ErrorCode | None,
    verification: Verification | ErrorCode | None,
) -> tuple[ProducedPartition, int]:
    """Append to one partition: its response and the last offset written (-1 on error).
    ``topic_name`` is None when the request named the topic by an unknown id; ``refusal``
    is the authorization error when the sender may not write it; ``verification`` the
    partition's outcome of ``_verify_transactions``."""
    try:
        if topic_name is None:
            raise KafkaError(ErrorCode.unknown_topic_id)
        if refusal is not None:
            raise KafkaError(refusal)
        if isinstance(verification, ErrorCode):
            raise KafkaError(verification, "the transaction coordinator did not confirm it")
        if acks not in _VALID_ACKS:
            raise KafkaError(ErrorCode.invalid_required_acks, f"acks={acks} is not -1, 0 or 1")
        min_insync = context.min_insync(topic_name)
        partition = context.replicas.get(topic_name, index)
        if not records:
            raise KafkaError(ErrorCode.corrupt_message, "empty records")
        info = partition.append_as_leader(records, acks, min_insync, verification)
    except Exception as error:  # every failure becomes this partition's error code
        code, message = error_of(error)
        leader = current_leader(context.store.image, topic_name, index, code)
        return ProducedPartition(index, code, error_message=message, current_leader=leader), -1
    if not info.duplicate:  # topic_name is known here: the append succeeded
        context.metrics.bytes_in.labels(topic_name).inc(len(records))
        context.metrics.records_in.labels(topic_name).inc(info.last_offset - info.first_offset + 1)
    produced = ProducedPartition(
        index, ErrorCode.none, info.first_offset, info.log_append_time, info.log_start_offset
    )
    return produced, info.last_offset
