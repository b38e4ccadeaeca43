"""InitProducerId v0-5: producer ids for idempotent producers, and for transactional ones
from the transactional id's coordinator (a bumped epoch that fences the previous producer)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.transactional import (
    check_transactional_id,
    fenced_as_the_version_knows,
)

_MAX_EPOCH = 2**15 - 1
FENCED_FROM = 4  # older versions get INVALID_PRODUCER_EPOCH instead of PRODUCER_FENCED


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    authorization = context.authorization
    producer_id = getattr(body, "producer_id", -1)
    epoch = getattr(body, "producer_epoch", -1)
    if body.transactional_id is not None:
        try:
            check_transactional_id(context, request, body.transactional_id)
            expected = (producer_id, epoch) if producer_id >= 0 else None
            timeout_ms = int(body.transaction_timeout.total_seconds() * 1000)
            found = await context.transactions.init_producer_id(
                body.transactional_id, timeout_ms, expected
            )
        except KafkaError as error:
            failed = fenced_as_the_version_knows(error, request.header.api_version, FENCED_FROM)
            return _answer(failed.code, -1, -1)
        return _answer(ErrorCode.none, *found)
    # an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic
    if not (
        authorization.authorize_cluster(request, AclOperation.IDEMPOTENT_WRITE, log_denied=False)
        or authorization.authorize_by_resource_type(request, AclOperation.WRITE, ResourceType.TOPIC)
    ):
        return _answer(ErrorCode.cluster_authorization_failed, -1, -1)
    if producer_id >= 0 and 0 <= epoch < _MAX_EPOCH - 1:
        # KIP-360: an idempotent producer bumps its epoch to reset its sequences.
        return _answer(ErrorCode.none, producer_id, epoch + 1)
    try:
        return _answer(ErrorCode.none, await context.producer_ids.next_id(), 0)
    except KafkaError as error:  # no producer id block reserved (etcd unreachable)
        return _answer(error.code, -1, -1)


def _answer(code: ErrorCode, producer_id: int, epoch: int) -> dict[str, Any]:
    return {"throttle_time": 0, "error_code": code, "producer_id": producer_id,
            "producer_epoch": epoch}  # fmt: skip
