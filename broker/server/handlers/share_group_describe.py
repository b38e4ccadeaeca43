"""ShareGroupDescribe v1 (KIP-932): a share group's epochs, assignor and members with their
assignments. A group that is not a share group is GROUP_ID_NOT_FOUND, as in Kafka."""

from __future__ import annotations

from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.share_assignor import SIMPLE_ASSIGNOR_NAME
from odradek.broker.group.share_group import ShareGroup, ShareMember
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.describe_groups import NO_OPERATIONS
from odradek.broker.server.handlers.errors import answer_or_error

FAILED = {
    "group_state": "",
    "group_epoch": 0,
    "assignment_epoch": 0,
    "assignor_name": "",
    "members": [],
    "authorized_operations": NO_OPERATIONS,
}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    image = context.store.image
    groups = []
    for group_id in body.group_ids:

        def answer(group_id: str = group_id) -> dict[str, Any]:
            authorization = context.authorization
            authorization.check(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id)
            described = _described(image, context.groups.describe_share_group(group_id))
            if body.include_authorized_operations:
                described["authorized_operations"] = authorization.authorized_operations(
                    request, ResourceType.GROUP, group_id
                )
            return described

        groups.append({"group_id": group_id, **answer_or_error(answer, FAILED, "error_message")})
    return {"throttle_time": 0, "groups": groups}


def _described(image: MetadataImage, group: ShareGroup) -> dict[str, Any]:
    return {
        "group_state": group.state.value,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor_name": SIMPLE_ASSIGNOR_NAME,
        "members": [_member(image, member) for member in group.members.values()],
        "authorized_operations": NO_OPERATIONS,
    }


def _member(image: MetadataImage, member: ShareMember) -> dict[str, Any]:
    return {
        "member_id": member.member_id,
        "rack_id": member.rack_id,
        "member_epoch": member.member_epoch,
        "client_id": member.client_id,
        "client_host": member.client_host,
        "subscribed_topic_names": list(member.subscribed_topic_names),
        "assignment": {
            "topic_partitions": [
                # topics deleted since are left out, as Kafka does
                {"topic_id": topic_id, "topic_name": name, "partitions": sorted(partitions)}
                for topic_id, partitions in member.assigned.items()
                if (name := image.topic_name(topic_id)) is not None
            ]
        },
    }
