"""EndTxn v0-5: commit or abort the transaction (answered once the coordinator wrote its
PrepareCommit/PrepareAbort; the markers follow). From v5 the request is of transaction
version 2: the epoch is bumped and the answer names the producer id and epoch to go on
with."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.transactional import (
    check_transactional_id,
    fenced_as_the_version_knows,
)
from odradek.broker.transaction.verification import ADDING_TRANSACTION_VERSION

FENCED_FROM = 2
EPOCH_BUMP_FROM = 5


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    try:
        check_transactional_id(context, request, body.transactional_id)
        producer = (body.producer_id, body.producer_epoch)
        version = request.header.api_version
        producer_id, epoch = await context.transactions.end_transaction(
            body.transactional_id,
            producer,
            body.committed,
            client_version=ADDING_TRANSACTION_VERSION if version >= EPOCH_BUMP_FROM else 0,
        )
    except KafkaError as error:
        failed = fenced_as_the_version_knows(error, request.header.api_version, FENCED_FROM)
        return {"throttle_time": 0, "error_code": failed.code}
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "producer_id": producer_id,
        "producer_epoch": epoch,
    }
