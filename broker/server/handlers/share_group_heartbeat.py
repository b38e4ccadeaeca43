"""ShareGroupHeartbeat v1 (KIP-932): join, stay in, and leave a share group; members choose
their own member id, the coordinator assigns (a partition may go to several members)."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.share_heartbeat import ShareHeartbeatRequest
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.consumer_group_heartbeat import heartbeat_answer
from odradek.broker.server.handlers.errors import awaited_answer_or_error

FAILED = {"member_id": None, "member_epoch": 0, "heartbeat_interval": 0, "assignment": None}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body

    async def answer() -> dict[str, Any]:
        authorization = context.authorization
        authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        names = body.subscribed_topic_names
        if names:
            # as Kafka: a member may not learn of topics it may not describe
            allowed = authorization.filter(
                request, AclOperation.DESCRIBE, ResourceType.TOPIC, names
            )
            if len(set(allowed)) < len(set(names)):
                raise KafkaError(ErrorCode.topic_authorization_failed)
        result = await context.groups.share_heartbeat(
            body.group_id,
            ShareHeartbeatRequest(
                member_id=body.member_id,
                member_epoch=body.member_epoch,
                client_id=request.header.client_id or "",
                client_host=request.client_host,
                rack_id=body.rack_id,
                subscribed_topic_names=names,
            ),
        )
        return heartbeat_answer(result)

    return {"throttle_time": 0, **await awaited_answer_or_error(answer, FAILED, "error_message")}
