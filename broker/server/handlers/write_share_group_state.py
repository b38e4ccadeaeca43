"""WriteShareGroupState v0: a partition leader writes the state of its share-partitions
to their share coordinator, answered once replicated (broker to broker; CLUSTER_ACTION on
the cluster). A write of an older state or leader epoch than the stored one is fenced."""

from __future__ import annotations

import functools
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.share.share_persister import batches_of
from odradek.broker.share.share_state import SharePartitionKey, ShareState


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    allowed = context.authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION)
    coordinator = context.shares.coordinator

    async def write(topic_id: Any, written: Any) -> dict[str, Any]:
        if not allowed:
            raise KafkaError(ErrorCode.cluster_authorization_failed)
        state = ShareState(
            written.start_offset,
            written.state_epoch,
            written.leader_epoch,
            batches_of(written.state_batches),
        )
        await coordinator.write(
            SharePartitionKey(body.group_id, topic_id, written.partition), state
        )
        return {"partition": written.partition}

    results = []
    for topic in body.topics:
        partitions = [
            await awaited_answer_or_error(
                functools.partial(write, topic.topic_id, written),
                {"partition": written.partition},
                "error_message",
            )
            for written in topic.partitions
        ]
        results.append({"topic_id": topic.topic_id, "partitions": partitions})
    return {"results": results}
