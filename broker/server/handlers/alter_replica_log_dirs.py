"""AlterReplicaLogDirs v1-2: move replicas between this broker's log directories (KIP-113).

Each replica answers NONE once its move has started (or it is already there),
LOG_DIR_NOT_FOUND for a path that is none of log.dirs, and REPLICA_NOT_AVAILABLE for a
replica not on this broker yet: it will be created in that directory, and
kafka-reassign-partitions retries until it exists.
"""

from __future__ import annotations

from typing import Any

from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {}
    allowed = context.authorization.authorize_cluster(request, AclOperation.ALTER)
    for log_dir in request.body.dirs:
        for topic in log_dir.topics:
            for index in topic.partitions:
                key = PartitionKey(topic.name, index)

                def move(key: PartitionKey = key, path: str = log_dir.path) -> dict[str, Any]:
                    if not allowed:
                        raise KafkaError(ErrorCode.cluster_authorization_failed)
                    context.replicas.alter_log_dir(key, path)
                    return {}

                answer = answer_or_error(move, {})
                results.setdefault(topic.name, []).append({"partition_index": index, **answer})
    return {
        "throttle_time": 0,
        "results": [{"topic_name": name, "partitions": items} for name, items in results.items()],
    }
