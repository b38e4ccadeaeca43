"""CreateTopics: validated, optionally validate-only topic creation."""

from __future__ import annotations

from typing import Any

from odradek.broker.config.parsing import format_value
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.config_description import describe_topic_config
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.topic_admin import create_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    authorization = context.authorization
    names = [item.name for item in body.topics]
    # Kafka: CREATE on the cluster allows every topic, else CREATE on each; the configs of
    # the answer need DESCRIBE_CONFIGS on the topic
    if authorization.authorize_cluster(request, AclOperation.CREATE, log_denied=False):
        creatable = set(names)
    else:
        creatable = authorization.allowed_names(
            request, AclOperation.CREATE, ResourceType.TOPIC, names
        )
    describable = authorization.allowed_names(
        request, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, log_denied=False
    )
    results = [
        await _create(context, item, body.validate_only, item.name in creatable,
                      item.name in describable, body.timeout.total_seconds())
        for item in body.topics
    ]  # fmt: skip
    return {"throttle_time": 0, "topics": results}


async def _create(
    context: BrokerContext,
    item: Any,
    validate_only: bool,
    creatable: bool,
    describable: bool,
    timeout_s: float,
) -> dict[str, Any]:
    failed = {"topic_id": None, "num_partitions": -1, "replication_factor": -1, "configs": None}
    outcome = await awaited_answer_or_error(
        lambda: _created(context, item, validate_only, creatable, describable, timeout_s),
        failed,
        "error_message",
    )
    return {"name": item.name, **outcome}


async def _created(
    context: BrokerContext,
    item: Any,
    validate_only: bool,
    creatable: bool,
    describable: bool,
    timeout_s: float,
) -> dict[str, Any]:
    """The topic, once this broker's replicas of it have their logs or ``timeout_s`` (the
    request's, as Kafka's controller waits for its creation) has passed."""
    if not creatable:
        raise KafkaError(ErrorCode.topic_authorization_failed, "Authorization failed.")
    topic = await create_topic(
        context,
        item.name,
        item.num_partitions,
        item.replication_factor,
        {entry.partition_index: entry.broker_ids for entry in item.assignments},
        {entry.name: entry.value for entry in item.configs},
        validate_only,
        settle_s=timeout_s,
    )
    return {
        "topic_id": topic.topic_id,
        "num_partitions": len(topic.partitions),
        "replication_factor": len(topic.partitions[0].replicas),
        "topic_config_error_code": (
            ErrorCode.none if describable else ErrorCode.topic_authorization_failed
        ),
        "configs": []
        if not describable
        else [
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
