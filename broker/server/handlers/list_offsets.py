"""ListOffsets v1-11: earliest, latest, max-timestamp and by-timestamp offsets; the
earliest-local (v8) and tiered (v9, v11) lookups as a broker without tiered storage."""

from __future__ import annotations

from typing import Any

from odradek.broker.cluster.partition import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    READ_COMMITTED,
)
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error

# The first version that may ask for each special timestamp (Kafka's ReplicaManager).
FIRST_VERSION = {
    LATEST_TIMESTAMP: 1,
    EARLIEST_TIMESTAMP: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    version = request.header.api_version
    topics = request.body.topics
    describable = context.authorization.allowed_names(
        request, AclOperation.DESCRIBE, ResourceType.TOPIC, (topic.name for topic in topics)
    )
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    _lookup(
                        context,
                        version,
                        topic.name,
                        item,
                        topic.name in describable,
                        getattr(request.body, "isolation_level", 0) == READ_COMMITTED,
                    )
                    for item in topic.partitions
                ],
            }
            for topic in topics
        ],
    }


def _lookup(
    context: BrokerContext,
    version: int,
    topic: str,
    item: Any,
    describable: bool,
    read_committed: bool,
) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        if not describable:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if item.timestamp < 0 and version < FIRST_VERSION.get(item.timestamp, version + 1):
            raise KafkaError(
                ErrorCode.unsupported_version,
                f"timestamp {item.timestamp} needs a newer ListOffsets version than {version}",
            )
        partition = context.replicas.get(topic, item.partition_index)
        partition.check_leader(getattr(item, "current_leader_epoch", -1))
        found = partition.find_offset(item.timestamp, read_committed)
        return {
            "timestamp": found.timestamp,
            "offset": found.offset,
            "leader_epoch": found.leader_epoch,
        }

    failed = {"timestamp": -1, "offset": -1, "leader_epoch": -1}
    return {"partition_index": item.partition_index, **answer_or_error(answer, failed)}
