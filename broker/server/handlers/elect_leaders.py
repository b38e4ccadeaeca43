"""ElectLeaders: preferred (or unclean) leader election on demand."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.partition_admin import elect_leader


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    kind = getattr(body, "election_type", 0)
    requested = body.topic_partitions
    if requested is None:
        image = context.store.image
        targets = [(t.name, [s.partition for s in t.partitions]) for t in image.topics.values()]
    else:
        targets = [(item.topic, list(item.partitions)) for item in requested]
    results = []
    if not context.authorization.authorize_cluster(request, AclOperation.ALTER):
        denied = {"error_code": ErrorCode.cluster_authorization_failed, "error_message": None}
        for topic, partitions in targets:
            outcome = [{"partition_id": partition, **denied} for partition in partitions]
            results.append({"topic": topic, "partition_result": outcome})
        return {"throttle_time": 0, **denied, "replica_election_results": results}
    for topic, partitions in targets:
        outcome = []
        for partition in partitions:

            async def answer(topic: str = topic, partition: int = partition) -> dict[str, Any]:
                await elect_leader(context, topic, partition, kind)
                return {}

            elected = await awaited_answer_or_error(answer, {}, "error_message")
            outcome.append({"partition_id": partition, **elected})
        results.append({"topic": topic, "partition_result": outcome})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "replica_election_results": results}
