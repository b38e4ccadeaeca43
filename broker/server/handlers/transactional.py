"""What the transaction APIs share: the WRITE check on the transactional id, and Kafka's
older name for PRODUCER_FENCED."""

from __future__ import annotations

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext


def check_transactional_id(context: BrokerContext, request: Request, transactional_id: str) -> None:
    context.authorization.check(
        request, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    )


def fenced_as_the_version_knows(error: KafkaError, version: int, fenced_from: int) -> KafkaError:
    """PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for request versions below ``fenced_from``."""
    if error.code is ErrorCode.producer_fenced and version < fenced_from:
        return KafkaError(ErrorCode.invalid_producer_epoch, error.message)
    return error
