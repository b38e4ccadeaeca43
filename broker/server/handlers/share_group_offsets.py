"""What the share-group offset APIs (Describe/Alter/DeleteShareGroupOffsets) have in
common: resolving topic names to share-partitions of the group."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from odradek.broker.group.share_group import InitializedTopics
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

Change = Callable[[InitializedTopics], Awaitable[list[dict[str, Any]]]]


def topic_id_of(context: BrokerContext, name: str) -> uuid.UUID:
    """The topic's id; UNKNOWN_TOPIC_OR_PARTITION if there is no such topic."""
    topic = context.store.image.topics.get(name)
    if topic is None:
        raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name}")
    return topic.topic_id


def topic_id_or_zero(context: BrokerContext, name: str) -> uuid.UUID:
    """The topic's id, or Kafka's ZERO_UUID for an unknown topic."""
    topic = context.store.image.topics.get(name)
    return topic.topic_id if topic is not None else uuid.UUID(int=0)


def readable_topics(context: BrokerContext, request: Request, names: Iterable[str]) -> set[str]:
    """The topics the sender may read (Kafka: READ on each topic a group's offsets name)."""
    return context.authorization.allowed_names(
        request, AclOperation.READ, ResourceType.TOPIC, names
    )


async def change_share_offsets(
    context: BrokerContext, request: Request, operation: AclOperation, create: bool, change: Change
) -> dict[str, Any]:
    """Alter or delete offsets of an empty share group: ``change`` edits a copy of the
    group's share-partitions (answering per topic), which the group then records. A
    group-level failure (authorization, members, the group's write) is the whole answer."""
    group_id = request.body.group_id
    try:
        context.authorization.check(request, operation, ResourceType.GROUP, group_id)
        _, share = context.groups.empty_share_group(group_id, create=create)
        share_partitions = dict(share.initialized)
        responses = await change(share_partitions)
        await context.groups.set_share_partitions(group_id, share_partitions)
    except Exception as error:  # the whole request fails with the group's error
        code, message = error_of(error)
        return {"throttle_time": 0, "error_code": code, "error_message": message, "responses": []}
    return {"throttle_time": 0, "error_code": ErrorCode.none, "responses": responses}
