"""Fetch: whole record batches from partition logs, long-polling for min_bytes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState
from odradek.broker.cluster.partition import READ_COMMITTED, Partition, PartitionKey
from odradek.broker.cluster.replication_quota import LEADER_THROTTLED_REPLICAS, throttled_replica
from odradek.broker.log.partition_log import FileRegion
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.fetch_response import (
    TOPIC_IDS_FROM,
    FetchedPartition,
    FetchedTopic,
    encode_fetch_response,
)
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.client_quota_manager import QuotaType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.fetch_sessions import SessionPartition
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.handlers.types import EncodedResponse
from odradek.broker.server.leader_locator import current_leader, leader_endpoints

Topics = list[FetchedTopic[FileRegion]]
REPLICA_STATE_FROM = 15  # the follower's id moved into ReplicaState (KIP-903)


@dataclass(frozen=True)
class _Requested:
    """One topic of the request: its name (None when its id is unknown) and id."""

    name: str | None
    topic_id: uuid.UUID | None
    partitions: Sequence[Any]
    denied: bool = False
    """The sender may not read it (answered TOPIC_AUTHORIZATION_FAILED)."""


async def handle(context: BrokerContext, request: Request) -> EncodedResponse:
    body = request.body
    version = request.header.api_version
    replica_id = body.replica_state.replica_id if version >= REPLICA_STATE_FROM else body.replica_id
    try:
        session = context.fetch_sessions.begin(body, version, privileged=replica_id >= 0)
    except KafkaError as error:  # the session is unknown or out of step: nothing is read
        refusal = encode_fetch_response(version, [], error.code.value)
        return EncodedResponse(refusal, throttle_first=True)
    requested = _to_read(context, request, replica_id, session.topics)
    rack_id = getattr(body, "rack_id", "")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + body.max_wait.total_seconds()
    # at most what the request asks and the broker's fetch.max.bytes, as in Kafka (KIP-541)
    max_bytes = min(body.max_bytes, context.config.get_int("fetch.max.bytes"))
    quota = context.quotas.active(QuotaType.FETCH) and replica_id < 0
    if quota:  # no more than the consumer's quota allows in one window, as Kafka bounds it
        max_bytes = min(max_bytes, _quota_window_bytes(context, request))
    min_bytes = min(body.min_bytes, max_bytes)
    read_committed = getattr(body, "isolation_level", 0) == READ_COMMITTED
    while True:
        topics, size, has_error, records = _read(
            context, requested, replica_id, rack_id, max_bytes, read_committed
        )
        remaining = deadline - loop.time()
        if size >= min_bytes or has_error or remaining <= 0:
            break
        waiters = _change_waiters(context, requested, follower=replica_id >= 0)
        if session.session is not None:  # and for its resting partitions
            waiters.append(session.session.wait_for_stir())
        if not waiters:
            break
        context.requests.leave(request.connection_id)  # Kafka's fetch purgatory
        await asyncio.wait(waiters, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        if session.session is not None:  # its partitions that stirred meanwhile join
            requested = _to_read(context, request, replica_id, session.refresh())
    throttle_ms = 0
    if quota:
        client_id = request.header.client_id
        throttle_ms = context.quotas.fetch_throttle_ms(request.principal, client_id, size)
    if throttle_ms:
        topics = []  # Kafka answers a fetch over the quota without partitions
        session_id = session.throttled(context.fetch_sessions)
    else:
        topics = session.answer(topics)
        session_id = session.session_id
    for topic in topics:
        sent = sum(partition.records_size for partition in topic.partitions)
        if sent:
            context.metrics.bytes_out.labels(topic.name).inc(sent)
            context.metrics.records_out.labels(topic.name).inc(records.get(topic.name, 0))
    leaders = (partition.current_leader for topic in topics for partition in topic.partitions)
    endpoints = leader_endpoints(context.store.image, leaders, request.listener_name)
    chunks = encode_fetch_response(
        version, topics, session_id=session_id, node_endpoints=endpoints, throttle_ms=throttle_ms
    )
    # every version served (4+) starts with throttle_time_ms
    return EncodedResponse(chunks, throttle_ms, throttle_first=True)


def _quota_window_bytes(context: BrokerContext, request: Request) -> int:
    client_id = request.header.client_id
    found = context.quotas.window_bytes(QuotaType.FETCH, request.principal, client_id)
    return found if found is not None else 2**31 - 1


def _to_read(
    context: BrokerContext, request: Request, replica_id: int, topics: Sequence[Any]
) -> list[_Requested]:
    """``topics`` as they are read: by name, each marked if the sender may not read it."""
    named = _requested(context.store.image, topics, request.header.api_version)
    return _authorized(context, request, replica_id, named)


def _requested(image: MetadataImage, topics: Sequence[Any], version: int) -> list[_Requested]:
    """The request's topics by name: from v13 on they come by id (KIP-516)."""
    if version >= TOPIC_IDS_FROM:
        return [_Requested(image.topic_name(t.topic_id), t.topic_id, t.partitions) for t in topics]
    return [_Requested(t.topic, None, t.partitions) for t in topics]


def _authorized(
    context: BrokerContext, request: Request, replica_id: int, requested: list[_Requested]
) -> list[_Requested]:
    """Kafka's checks: a follower (replica id >= 0) needs CLUSTER_ACTION on the cluster for
    every partition, a consumer READ on each topic."""
    authorization = context.authorization
    if replica_id >= 0:
        denied = not authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION)
        return [replace(topic, denied=denied) for topic in requested]
    readable = authorization.allowed_names(
        request, AclOperation.READ, ResourceType.TOPIC, (topic.name for topic in requested)
    )
    return [
        replace(topic, denied=topic.name is not None and topic.name not in readable)
        for topic in requested
    ]


def _read(
    context: BrokerContext,
    requested: Sequence[_Requested],
    replica_id: int,
    rack_id: str,
    max_bytes: int,
    read_committed: bool,
) -> tuple[Topics, int, bool, dict[str, int]]:
    """The fetched partitions (at most ``max_bytes`` of records), bytes, whether any
    failed, and records sent per topic (counted by offsets, so compaction gaps count too)."""
    budget = max_bytes
    total, has_error = 0, False
    records: dict[str, int] = {}
    topics: Topics = []
    for topic in requested:
        fetched: FetchedTopic[FileRegion] = FetchedTopic(topic.name or "", topic_id=topic.topic_id)
        for item in topic.partitions:
            result, sent_up_to = _read_partition(
                context,
                topic,
                item,
                min(budget, item.partition_max_bytes),
                replica_id,
                rack_id,
                min_one_batch=total == 0,
                read_committed=read_committed,
            )
            has_error |= result.error_code != 0
            total += result.records_size
            if topic.name is not None and sent_up_to > item.fetch_offset:
                records[topic.name] = records.get(topic.name, 0) + sent_up_to - item.fetch_offset
            budget = max(budget - result.records_size, 0)
            fetched.partitions.append(result)
        topics.append(fetched)
    return topics, total, has_error, records


def _read_partition(
    context: BrokerContext,
    requested: _Requested,
    item: Any,
    max_bytes: int,
    replica_id: int,
    rack_id: str,
    min_one_batch: bool,
    read_committed: bool,
) -> tuple[FetchedPartition[FileRegion], int]:
    """The partition's answer and the offset after its last batch (-1: none).

    Consumers (replica id < 0) read up to the high watermark (read_committed ones to the
    last stable offset, told of the aborted transactions in what they get), from the
    leader or (Fetch v11+, KIP-392) any replica; followers read to the leader's log end."""
    committed_only = replica_id < 0
    topic = requested.name
    # a fetch session's partition, unless the consumer reads from its rack's replica
    session_item = item if isinstance(item, SessionPartition) and not rack_id else None
    if session_item is not None:
        session_item.read_stamp = None
    try:
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_id)
        if requested.denied:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        partition = context.replicas.get(topic, item.partition)
        if session_item is not None:
            quiet = session_item.quiet(partition, partition.fetch_stamp(read_committed))
            if quiet is not None:
                if not committed_only:  # the follower is still in step: keep it in the ISR
                    partition.record_follower_fetch(replica_id, item.fetch_offset)
                return quiet, -1
        epoch = getattr(item, "current_leader_epoch", -1)
        if committed_only and rack_id and not partition.is_leader:
            partition.check_follower(epoch)
        else:
            partition.check_leader(epoch)
        throttled = False
        if not committed_only:
            partition.record_follower_fetch(replica_id, item.fetch_offset)
            throttled = _throttled(context, topic, partition, replica_id)
            if throttled and context.leader_quota.exceeded():
                max_bytes, min_one_batch = 0, False  # held back: this partition sends nothing
        elif rack_id and partition.is_leader:
            preferred = _replica_in_rack(context, partition.state, rack_id)
            if preferred is not None:
                return _redirect(partition, item.partition, preferred), -1
        result = partition.read(
            item.fetch_offset, max_bytes, committed_only, min_one_batch, read_committed
        )
        if throttled:
            context.leader_quota.record(result.size)
        if session_item is not None and _at_the_end(partition, item.fetch_offset, replica_id,
                                                    read_committed, result.size):  # fmt: skip
            session_item.at_end(partition, partition.fetch_stamp(read_committed))
    except Exception as error:  # every failure becomes this partition's error code
        code, _ = error_of(error)
        known = None if requested.denied else topic  # nothing about a topic it may not read
        log_start, high_watermark = _offsets_or_unknown(context, known, item.partition)
        leader = current_leader(context.store.image, topic, item.partition, code)
        failed = FetchedPartition[FileRegion](
            item.partition, code, high_watermark, high_watermark, log_start, current_leader=leader
        )
        return failed, -1
    aborted: tuple[tuple[int, int], ...] = ()
    if read_committed and committed_only and result.next_offset > item.fetch_offset:
        found = partition.aborted_transactions(item.fetch_offset, result.next_offset)
        aborted = tuple((entry.producer_id, entry.first_offset) for entry in found)
    answer = FetchedPartition(
        partition_index=item.partition,
        error_code=ErrorCode.none.value,
        high_watermark=partition.high_watermark,
        last_stable_offset=partition.last_stable_offset,
        log_start_offset=result.log_start_offset,
        records=result.regions,
        records_size=result.size,
        aborted_transactions=aborted,
    )
    return answer, result.next_offset


def _at_the_end(
    partition: Partition, fetch_offset: int, replica_id: int, read_committed: bool, sent: int
) -> bool:
    """Whether a read sent nothing because its fetcher is at the end of what it may read:
    a follower at the log end, a consumer at the high watermark (read_committed: the last
    stable offset)."""
    if sent:
        return False
    if replica_id >= 0:
        end = partition.log_end_offset
    else:
        end = partition.last_stable_offset if read_committed else partition.high_watermark
    return fetch_offset >= end


def _throttled(context: BrokerContext, topic: str, partition: Partition, replica: int) -> bool:
    """Whether a follower's fetch counts against the leader's replication quota: it is out
    of the ISR and the topic lists this leader's replica as throttled (KIP-73)."""
    if replica in partition.state.isr:
        return False
    key = PartitionKey(topic, partition.state.partition)
    image = context.store.image
    return throttled_replica(image, key, context.config.node_id, LEADER_THROTTLED_REPLICAS)


def _replica_in_rack(context: BrokerContext, state: PartitionState, rack: str) -> int | None:
    """An in-sync replica in the consumer's rack, when the leader is not in it."""
    if not context.config.get_str("replica.selector.class"):
        return None
    brokers = context.store.image.brokers
    leader = brokers.get(state.leader)
    if leader is not None and leader.rack == rack:
        return None
    return next(
        (r for r in state.isr if r in brokers and brokers[r].rack == rack),
        None,
    )


def _redirect(partition: Partition, index: int, replica: int) -> FetchedPartition[FileRegion]:
    """No records, only the replica the consumer should fetch from instead."""
    return FetchedPartition(
        partition_index=index,
        error_code=ErrorCode.none.value,
        high_watermark=partition.high_watermark,
        last_stable_offset=partition.last_stable_offset,
        log_start_offset=partition.log_start_offset,
        preferred_read_replica=replica,
    )


def _offsets_or_unknown(context: BrokerContext, topic: str | None, index: int) -> tuple[int, int]:
    if topic is None:
        return -1, -1
    try:
        partition = context.replicas.get(topic, index)
    except KafkaError:
        return -1, -1
    return partition.log_start_offset, partition.high_watermark


def _change_waiters(
    context: BrokerContext, requested: Sequence[_Requested], follower: bool
) -> list[asyncio.Future[None]]:
    """What a waiting fetch wakes for: a follower's only for new records or a new state,
    a consumer's for a high watermark too (it makes records readable)."""
    waiters = []
    for topic in requested:
        if topic.name is None:
            continue
        for item in topic.partitions:
            try:
                partition = context.replicas.get(topic.name, item.partition)
            except KafkaError:  # unknown partitions were answered with an error already
                continue
            waiters.append(partition.wait_for_growth() if follower else partition.wait_for_change())
    return waiters
