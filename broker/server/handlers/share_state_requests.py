"""What the share coordinator's APIs (Initialize/Read/Write/DeleteShareGroupState) have in
common: brokers ask them (CLUSTER_ACTION on the cluster), about share-partitions listed
by topic id, and each partition gets its own answer or error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.share.share_state import SharePartitionKey

Answer = Callable[[SharePartitionKey, Any], Awaitable[Mapping[str, Any]]]


async def answer_per_partition(
    context: BrokerContext, request: Request, answer: Answer, failed: Mapping[str, Any]
) -> dict[str, Any]:
    """``answer(key, partition)`` for every partition of the request (``failed`` is what
    a failed partition carries besides its error)."""
    body = request.body
    allowed = context.authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION)
    results = []
    for topic in body.topics:
        partitions = []
        for item in topic.partitions:
            key = SharePartitionKey(body.group_id, topic.topic_id, item.partition)

            async def one(key: SharePartitionKey = key, item: Any = item) -> dict[str, Any]:
                if not allowed:
                    raise KafkaError(ErrorCode.cluster_authorization_failed)
                return {"partition": key.partition, **await answer(key, item)}

            partitions.append(
                await awaited_answer_or_error(
                    one, {**failed, "partition": item.partition}, "error_message"
                )
            )
        results.append({"topic_id": topic.topic_id, "partitions": partitions})
    return {"results": results}
