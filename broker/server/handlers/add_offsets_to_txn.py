"""AddOffsetsToTxn v0-4 (transaction version 1; version 2 adds the partition with
TxnOffsetCommit v5): the group's ``__consumer_offsets`` partition joins the transaction,
so TxnOffsetCommit's offsets commit or abort with it (READ on the group)."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.transactional import (
    check_transactional_id,
    fenced_as_the_version_knows,
)

FENCED_FROM = 2


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    try:
        check_transactional_id(context, request, body.transactional_id)
        context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        offsets = await context.groups.ensure_offsets_topic()
        partition = partition_for_group(body.group_id, len(offsets.partitions))
        producer = (body.producer_id, body.producer_epoch)
        await context.transactions.add_partitions(
            body.transactional_id, producer, [(OFFSETS_TOPIC, partition)], client_version=0
        )
    except KafkaError as error:
        failed = fenced_as_the_version_knows(error, request.header.api_version, FENCED_FROM)
        return {"throttle_time": 0, "error_code": failed.code}
    return {"throttle_time": 0, "error_code": ErrorCode.none}
