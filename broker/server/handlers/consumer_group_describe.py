"""ConsumerGroupDescribe v0-1 (KIP-848): a consumer group's epochs, assignor and members
with their current and target assignments. A classic group is answered GROUP_ID_NOT_FOUND,
as Kafka does (admin clients then fall back to DescribeGroups)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_member import ConsumerMember, partitions_of
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.describe_groups import NO_OPERATIONS
from odradek.broker.server.handlers.errors import answer_or_error

CONSUMER_MEMBER_TYPE = 1  # v1's member_type: the member speaks the consumer protocol


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    image = context.store.image
    groups = []
    for group_id in body.group_ids:

        def answer(group_id: str = group_id) -> dict[str, Any]:
            authorization = context.authorization
            authorization.check(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id)
            group = context.groups.describe(group_id)
            if group is None:
                raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
            if group.consumer is None:
                raise KafkaError(
                    ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group."
                )
            described = _described(image, group.consumer, context.groups.config.consumer_assignors)
            if body.include_authorized_operations:
                described["authorized_operations"] = authorization.authorized_operations(
                    request, ResourceType.GROUP, group_id
                )
            return described

        failed = {
            "group_state": "Dead",
            "group_epoch": -1,
            "assignment_epoch": -1,
            "assignor_name": "",
            "members": [],
            "authorized_operations": NO_OPERATIONS,
        }
        groups.append({"group_id": group_id, **answer_or_error(answer, failed, "error_message")})
    return {"throttle_time": 0, "groups": groups}


def _described(
    image: MetadataImage, group: ConsumerGroup, assignors: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": group.preferred_assignor(assignors[0]),
        "members": [_member(image, group, member) for member in group.members.values()],
        "authorized_operations": NO_OPERATIONS,
    }


def _member(image: MetadataImage, group: ConsumerGroup, member: ConsumerMember) -> dict[str, Any]:
    return {
        "member_id": member.member_id,
        "instance_id": member.instance_id,
        "rack_id": member.rack_id,
        "member_epoch": member.member_epoch,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "subscribed_topic_regex": member.subscribed_topic_regex,
        "assignment": _assignment(image, partitions_of(member.assigned)),
        "target_assignment": _assignment(image, group.target.get(member.member_id, {})),
        "member_type": CONSUMER_MEMBER_TYPE,
    }


def _assignment(
    image: MetadataImage, partitions: Mapping[uuid.UUID, frozenset[int]]
) -> dict[str, Any]:
    return {
        "topic_partitions": [
            {
                "topic_id": topic_id,
                "topic_name": image.topic_name(topic_id) or "",
                "partitions": sorted(p),
            }
            for topic_id, p in partitions.items()
        ]
    }
