"""OffsetFetch v1-10: groups' committed offsets (v2+: null topics asks for all of them;
v7+: require_stable; v8+: several groups in one request; v9+: a KIP-848 member names itself
and its epoch; v10: topics named by id)."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.group import TopicPartition
from odradek.broker.group.record_format import CommittedOffset
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

NO_OFFSET = -1
GROUPS_FROM = 8  # several groups per request
TOPIC_IDS_FROM = 10
REQUIRE_STABLE_FROM = 7


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    version = request.header.api_version
    image = context.store.image
    if version >= GROUPS_FROM:
        groups = [
            {
                "group_id": g.group_id,
                **_group(
                    context,
                    request,
                    image,
                    g.group_id,
                    g.topics,
                    (getattr(g, "member_id", None), getattr(g, "member_epoch", -1)),
                ),
            }
            for g in body.groups
        ]
        return {"throttle_time": 0, "groups": groups}
    answer = _group(context, request, image, body.group_id, body.topics)
    return {"throttle_time": 0, **answer}


def _group(
    context: BrokerContext,
    request: Request,
    image: MetadataImage,
    group_id: str,
    topics: Sequence[Any] | None,
    member: tuple[str | None, int] = (None, -1),
) -> dict[str, Any]:
    """One group's answer: its error code and topics. Kafka's checks: DESCRIBE on the group,
    then DESCRIBE on each topic (a topic the sender may not describe is answered
    TOPIC_AUTHORIZATION_FAILED when named, and left out of all the group's offsets). With
    ``require_stable`` (v7+, KIP-447) a partition with offsets pending in an open transaction
    is answered UNSTABLE_OFFSET_COMMIT, which clients retry until the transaction ends."""
    authorization = context.authorization
    version = request.header.api_version
    by_id = version >= TOPIC_IDS_FROM
    require_stable = version >= REQUIRE_STABLE_FROM and bool(request.body.require_stable)
    requested: list[TopicPartition] | None = None
    unknown_ids: dict[uuid.UUID, list[int]] = {}
    if topics is not None:
        requested = []
        for topic in topics:
            name = image.topic_name(topic.topic_id) if by_id else topic.name
            if name is None:
                unknown_ids[topic.topic_id] = list(topic.partition_indexes)
            else:
                requested.extend((name, index) for index in topic.partition_indexes)
    denied: list[TopicPartition] = []
    if requested is not None:
        describable = authorization.allowed_names(
            request, AclOperation.DESCRIBE, ResourceType.TOPIC, (name for name, _ in requested)
        )
        denied = [item for item in requested if item[0] not in describable]
        requested = [item for item in requested if item[0] in describable]
    try:
        authorization.check(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id)
        found = context.groups.fetch_offsets(group_id, requested, member)
        if topics is None:
            describable = authorization.allowed_names(
                request, AclOperation.DESCRIBE, ResourceType.TOPIC, {name for name, _ in found}
            )
            found = {item: offset for item, offset in found.items() if item[0] in describable}
    except Exception as error:  # every failure becomes the group's error code
        code, _ = error_of(error)
        # v1 has no top-level error: each partition carries it
        failed = [(item, None, code) for item in [*(requested or []), *denied]]
        return {"error_code": code, "topics": _topics(image, failed, by_id)}
    unstable = context.groups.pending_transactional(group_id) if require_stable else set()
    entries: list[_Entry] = [
        (item, None, ErrorCode.unstable_offset_commit)
        if item in unstable
        else (item, committed, ErrorCode.none)
        for item, committed in found.items()
    ]
    entries += [(item, None, ErrorCode.topic_authorization_failed) for item in denied]
    answered = _topics(image, entries, by_id)
    for topic_id, indexes in unknown_ids.items():
        unknown = [_partition(index, None, ErrorCode.unknown_topic_id) for index in indexes]
        answered.append({"name": "", "topic_id": topic_id, "partitions": unknown})
    return {"error_code": ErrorCode.none, "topics": answered}


_Entry = tuple[TopicPartition, CommittedOffset | None, ErrorCode]


def _topics(image: MetadataImage, entries: Sequence[_Entry], by_id: bool) -> list[dict[str, Any]]:
    """Topics as the response nests them; by id, topics that no longer exist are left out."""
    topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (topic, partition), committed, code in entries:
        topics[topic].append(_partition(partition, committed, code))
    answered = []
    for name, partitions in topics.items():
        metadata = image.topics.get(name)
        if by_id and metadata is None:
            continue
        topic_id = metadata.topic_id if metadata is not None else None
        answered.append({"name": name, "topic_id": topic_id, "partitions": partitions})
    return answered


def _partition(index: int, committed: CommittedOffset | None, code: ErrorCode) -> dict[str, Any]:
    return {
        "partition_index": index,
        "committed_offset": committed.offset if committed else NO_OFFSET,
        "committed_leader_epoch": committed.leader_epoch if committed else -1,
        "metadata": (committed.metadata or "") if committed else "",
        "error_code": code,
    }
