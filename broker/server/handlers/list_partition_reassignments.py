"""ListPartitionReassignments: the reassignments in progress."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    if not context.authorization.authorize_cluster(request, AclOperation.DESCRIBE):
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": None, "topics": []}  # fmt: skip
    image = context.store.image
    wanted = request.body.topics
    selected = (
        {topic.name: set(topic.partition_indexes) for topic in wanted}
        if wanted is not None
        else {name: None for name in image.topics}
    )
    topics = []
    for name, indexes in selected.items():
        metadata = image.topics.get(name)
        if metadata is None:
            continue
        ongoing = [
            {
                "partition_index": state.partition,
                "replicas": state.replicas,
                "adding_replicas": state.adding,
                "removing_replicas": state.removing,
            }
            for state in metadata.partitions
            if state.reassigning and (indexes is None or state.partition in indexes)
        ]
        if ongoing:
            topics.append({"name": name, "partitions": ongoing})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "topics": topics}  # fmt: skip
