"""TxnOffsetCommit v0-5: a consume-transform-produce application's offsets, written in its
transaction and visible once the transaction commits (sendOffsetsToTransaction). WRITE on
the transactional id, READ on the group and on each topic; v3 names the member, whose
generation is checked as for OffsetCommit. From v5 (transaction version 2) the group's
``__consumer_offsets`` partition joins the transaction here, AddOffsetsToTxn being gone."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.coordinator import OffsetToCommit
from odradek.broker.group.group import TopicPartition
from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.transactional import (
    check_transactional_id,
    fenced_as_the_version_knows,
)
from odradek.broker.transaction.verification import TransactionCheck

FENCED_FROM = 2
ADDS_PARTITION_FROM = 5


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    requested = [(t.name, p.partition_index) for t in body.topics for p in t.partitions]
    results: dict[TopicPartition, ErrorCode] = {}
    try:
        check_transactional_id(context, request, body.transactional_id)
        context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        if request.header.api_version >= ADDS_PARTITION_FROM:
            await _add_offsets_partition(context, body)
    except KafkaError as error:
        code = fenced_as_the_version_knows(error, request.header.api_version, FENCED_FROM).code
        results = dict.fromkeys(requested, code)
    else:
        readable = context.authorization.allowed_names(
            request, AclOperation.READ, ResourceType.TOPIC, {name for name, _ in requested}
        )
        offsets = {
            (topic.name, item.partition_index): OffsetToCommit(
                item.committed_offset,
                getattr(item, "committed_leader_epoch", -1),
                item.committed_metadata,
            )
            for topic in body.topics
            if topic.name in readable
            for item in topic.partitions
        }
        results = {
            key: ErrorCode.topic_authorization_failed for key in requested if key not in offsets
        }
        if offsets:
            results |= await context.groups.commit_transactional_offsets(
                body.group_id,
                (body.producer_id, body.producer_epoch),
                getattr(body, "generation_id", -1),
                getattr(body, "member_id", ""),
                getattr(body, "group_instance_id", None),
                offsets,
            )
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for topic, index in requested:
        by_topic.setdefault(topic, []).append(
            {"partition_index": index, "error_code": results[(topic, index)]}
        )
    return {
        "throttle_time": 0,
        "topics": [{"name": name, "partitions": items} for name, items in by_topic.items()],
    }


async def _add_offsets_partition(context: BrokerContext, body: Any) -> None:
    """The group's offsets partition joins the producer's transaction (as a partition
    leader adds a Produce's), or the request fails with why."""
    offsets = await context.groups.ensure_offsets_topic()
    key = (OFFSETS_TOPIC, partition_for_group(body.group_id, len(offsets.partitions)))
    producer = (body.producer_id, body.producer_epoch)
    codes = await context.verifier.verify(
        body.transactional_id, producer, [key], TransactionCheck.ADD
    )
    code = codes[key]
    if code is ErrorCode.not_enough_replicas:  # Kafka's group coordinator: retry elsewhere
        code = ErrorCode.coordinator_not_available
    if code is not ErrorCode.none:
        raise KafkaError(code, "the offsets partition did not join the transaction")
