"""CreateTopics: validated, optionally validate-only topic creation."""

from __future__ import annotations

from typing import Any

from odradek.broker.config.parsing import format_value
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.config_description import describe_topic_config
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.topic_admin import create_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    results = [await _create(context, item, body.validate_only) for item in body.topics]
    return {"throttle_time": 0, "topics": results}


async def _create(context: BrokerContext, item: Any, validate_only: bool) -> dict[str, Any]:
    try:
        topic = await create_topic(
            context,
            item.name,
            item.num_partitions,
            item.replication_factor,
            {entry.partition_index: entry.broker_ids for entry in item.assignments},
            {entry.name: entry.value for entry in item.configs},
            validate_only,
        )
    except Exception as error:  # every failure becomes this topic's error code
        code, message = error_of(error)
        return {"name": item.name, "topic_id": None, "error_code": code, "error_message": message,
                "num_partitions": -1, "replication_factor": -1, "configs": None}  # fmt: skip
    return {
        "name": topic.name,
        "topic_id": topic.topic_id,
        "error_code": ErrorCode.none,
        "error_message": None,
        "num_partitions": len(topic.partitions),
        "replication_factor": len(topic.partitions[0].replicas),
        "configs": [
            {
                "name": entry.name,
                "value": format_value(entry.value),
                "read_only": False,
                "config_source": entry.source,
                "is_sensitive": False,
            }
            for entry in describe_topic_config(context, topic)
        ],
    }
