"""DescribeGroups v0-6: state, protocol and members (with assignments when Stable); v6 says
why a group could not be described (GROUP_ID_NOT_FOUND for an unknown one, as Kafka). A
KIP-848 consumer group is described too, in the consumer protocol's terms; a share group
is not (as Kafka: it is described by ShareGroupDescribe)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_member import partitions_of
from odradek.broker.group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    assignment_bytes,
    subscription_bytes,
)
from odradek.broker.group.group import Group
from odradek.broker.group.group_state import GroupState
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

NO_OPERATIONS = -2147483648
NOT_FOUND_AS_ERROR_FROM = 6


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "groups": [
            _with_operations(context, request, _describe(context, request, group_id))
            for group_id in request.body.groups
        ],
    }


def _with_operations(
    context: BrokerContext, request: Request, entry: dict[str, Any]
) -> dict[str, Any]:
    """v3+ may ask for the operations the sender may do on each group it may describe."""
    if getattr(request.body, "include_authorized_operations", False) and entry["error_code"] in (
        ErrorCode.none,
        ErrorCode.group_id_not_found,
    ):
        entry["authorized_operations"] = context.authorization.authorized_operations(
            request, ResourceType.GROUP, entry["group_id"]
        )
    return entry


def _describe(context: BrokerContext, request: Request, group_id: str) -> dict[str, Any]:
    version = request.header.api_version
    try:
        context.authorization.check(request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id)
        group = context.groups.describe(group_id)
    except Exception as error:  # every failure becomes this group's error code
        code, message = error_of(error)
        return {**_entry(group_id, code, GroupState.DEAD.value), "error_message": message}
    if group is None or group.share is not None:
        if version >= NOT_FOUND_AS_ERROR_FROM:
            dead = _entry(group_id, ErrorCode.group_id_not_found, GroupState.DEAD.value)
            why = "not found" if group is None else "is not a classic group"
            return {**dead, "error_message": f"Group {group_id} {why}."}
        # before v6 an unknown group is described as Dead, without an error
        return _entry(group_id, ErrorCode.none, GroupState.DEAD.value)
    if group.consumer is not None:
        assignors = context.groups.config.consumer_assignors
        return _consumer_entry(context.store.image, group_id, group.consumer, assignors)
    return _entry(group_id, ErrorCode.none, group.state.value, group)


def _consumer_entry(
    image: MetadataImage, group_id: str, group: ConsumerGroup, assignors: tuple[str, ...]
) -> dict[str, Any]:
    """A KIP-848 group as classic tools read one: protocol type ``consumer``, the assignor
    as protocol, each member's subscription and assignment in the consumer protocol's
    bytes (Kafka itself answers GROUP_ID_NOT_FOUND here; its admin client asks
    ConsumerGroupDescribe first)."""

    def names(partitions: Mapping[uuid.UUID, frozenset[int]]) -> dict[str, frozenset[int]]:
        return {
            name: indexes
            for topic_id, indexes in partitions.items()
            if (name := image.topic_name(topic_id)) is not None
        }

    return {
        "error_code": ErrorCode.none,
        "group_id": group_id,
        "group_state": group.state.value,
        "protocol_type": CONSUMER_PROTOCOL_TYPE,
        "protocol_data": group.preferred_assignor(assignors[0]),
        "members": [
            {
                "member_id": member.member_id,
                "group_instance_id": member.instance_id,
                "client_id": member.client_id,
                "client_host": member.client_host,
                "member_metadata": subscription_bytes(member.subscribed_topic_names),
                "member_assignment": assignment_bytes(names(partitions_of(member.assigned))),
            }
            for member in group.members.values()
        ],
        "authorized_operations": NO_OPERATIONS,
    }


def _entry(
    group_id: str, code: ErrorCode, state: str, group: Group | None = None
) -> dict[str, Any]:
    stable = group is not None and group.is_(GroupState.STABLE)
    protocol = group.protocol_name if group is not None and stable else None
    members = [] if group is None else list(group.members.values())
    return {
        "error_code": code,
        "group_id": group_id,
        "group_state": state,
        "protocol_type": (group.protocol_type or "") if group is not None else "",
        "protocol_data": protocol or "",
        "members": [
            {
                "member_id": member.member_id,
                "group_instance_id": member.group_instance_id,
                "client_id": member.client_id,
                "client_host": member.client_host,
                # Kafka shows metadata and assignment only once the group is Stable
                "member_metadata": member.metadata_for(protocol) if protocol else b"",
                "member_assignment": member.assignment if stable else b"",
            }
            for member in members
        ],
        "authorized_operations": NO_OPERATIONS,
    }
