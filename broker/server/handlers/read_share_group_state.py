"""ReadShareGroupState v0: a partition leader asks the share coordinator for the state of
its share-partitions (broker to broker; CLUSTER_ACTION on the cluster). A share-partition
with no state is answered with state epoch -1."""

from __future__ import annotations

import functools
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error
from odradek.broker.share.share_persister import NEVER_WRITTEN, wire_batches
from odradek.broker.share.share_state import SharePartitionKey

FAILED = {"state_epoch": NEVER_WRITTEN, "start_offset": -1, "state_batches": []}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    allowed = context.authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION)
    coordinator = context.shares.coordinator

    def answer(key: SharePartitionKey) -> dict[str, Any]:
        if not allowed:
            raise KafkaError(ErrorCode.cluster_authorization_failed)
        state = coordinator.read(key)
        if state is None:
            return {**FAILED, "partition": key.partition}
        return {
            "partition": key.partition,
            "state_epoch": state.state_epoch,
            "start_offset": state.start_offset,
            "state_batches": wire_batches(state.batches),
        }

    return {
        "results": [
            {
                "topic_id": topic.topic_id,
                "partitions": [
                    answer_or_error(
                        functools.partial(
                            answer, SharePartitionKey(body.group_id, topic.topic_id, p.partition)
                        ),
                        {**FAILED, "partition": p.partition},
                        "error_message",
                    )
                    for p in topic.partitions
                ],
            }
            for topic in body.topics
        ]
    }
