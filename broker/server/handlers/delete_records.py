"""DeleteRecords: move partitions' log start offsets forward."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    topics = request.body.topics
    deletable = context.authorization.allowed_names(
        request, AclOperation.DELETE, ResourceType.TOPIC, (topic.name for topic in topics)
    )
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [
                    _delete(context, topic.name, item, topic.name in deletable)
                    for item in topic.partitions
                ],
            }
            for topic in topics
        ],
    }


def _delete(context: BrokerContext, topic: str, item: Any, deletable: bool) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        if not deletable:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        partition = context.replicas.get(topic, item.partition_index)
        partition.check_leader()
        return {"low_watermark": partition.delete_records_before(item.offset)}

    failed = {"low_watermark": -1}
    return {"partition_index": item.partition_index, **answer_or_error(answer, failed)}
