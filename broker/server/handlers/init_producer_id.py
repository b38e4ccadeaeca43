"""InitProducerId: producer ids for idempotent producers (transactions come later)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext

_MAX_EPOCH = 2**15 - 1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    authorization = context.authorization
    if body.transactional_id is not None:
        # WRITE on the transactional id first, as Kafka; transactions are not served yet
        authorization.authorize(
            request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, body.transactional_id
        )
        return _answer(ErrorCode.transactional_id_authorization_failed, -1, -1)
    # an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic
    if not (
        authorization.authorize_cluster(request, AclOperation.IDEMPOTENT_WRITE, log_denied=False)
        or authorization.authorize_by_resource_type(request, AclOperation.WRITE, ResourceType.TOPIC)
    ):
        return _answer(ErrorCode.cluster_authorization_failed, -1, -1)
    producer_id = getattr(body, "producer_id", -1)
    epoch = getattr(body, "producer_epoch", -1)
    if producer_id >= 0 and 0 <= epoch < _MAX_EPOCH - 1:
        # KIP-360: an idempotent producer bumps its epoch to reset its sequences.
        return _answer(ErrorCode.none, producer_id, epoch + 1)
    return _answer(ErrorCode.none, await context.producer_ids.next_id(), 0)


def _answer(code: ErrorCode, producer_id: int, epoch: int) -> dict[str, Any]:
    return {"throttle_time": 0, "error_code": code, "producer_id": producer_id,
            "producer_epoch": epoch}  # fmt: skip
