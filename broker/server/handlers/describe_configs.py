"""DescribeConfigs: topic, broker and group resources, with sources and synonyms, and the
levels of the broker's loggers."""

from __future__ import annotations

from typing import Any

from odradek.broker.config.broker_config import ConfigSource
from odradek.broker.config.definitions import ConfigType
from odradek.broker.config.parsing import format_value
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.authorization import CONFIG_GROUP, config_resource
from odradek.broker.server.broker_loggers import (
    BROKER_LOGGER_RESOURCE,
    check_broker_logger_resource,
    logger_levels,
)
from odradek.broker.server.config_description import (
    ConfigEntry,
    describe_broker_config,
    describe_cluster_default_config,
    describe_group_config,
    describe_topic_config,
)
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    options = (
        getattr(body, "include_synonyms", False),
        getattr(body, "include_documentation", False),
    )
    return {
        "throttle_time": 0,
        "results": [_describe(context, request, resource, *options) for resource in body.resources],
    }


def _describe(
    context: BrokerContext, request: Request, resource: Any, synonyms: bool, documentation: bool
) -> dict[str, Any]:
    result = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
    keys = resource.configuration_keys

    def answer() -> dict[str, Any]:
        context.authorization.check(
            request,
            AclOperation.DESCRIBE_CONFIGS,
            *config_resource(resource.resource_type, resource.resource_name),
        )
        if resource.resource_type == BROKER_LOGGER_RESOURCE:
            configs = _logger_entries(context, resource.resource_name)
        else:
            entries = _entries(context, resource.resource_type, resource.resource_name)
            configs = [_config(entry, synonyms, documentation) for entry in entries]
        return {
            "error_message": None,
            "configs": [c for c in configs if keys is None or c["name"] in keys],
        }

    return {**result, **answer_or_error(answer, {"configs": ()}, "error_message")}


def _logger_entries(context: BrokerContext, name: str) -> list[dict[str, Any]]:
    check_broker_logger_resource(context.config.node_id, name)
    return [
        {
            "name": logger,
            "value": level,
            "read_only": False,
            "is_default": False,
            "config_source": ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
            "is_sensitive": False,
            "synonyms": [],
            "config_type": ConfigType.STRING.value,
            "documentation": None,
        }
        for logger, level in logger_levels().items()
    ]


def _entries(context: BrokerContext, resource_type: int, name: str) -> list[ConfigEntry]:
    if resource_type == TOPIC_RESOURCE:
        topic = context.store.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        return describe_topic_config(context, topic)
    if resource_type == BROKER_RESOURCE:
        if name == "":
            return describe_cluster_default_config(context)
        if name != str(context.config.node_id):
            raise KafkaError(ErrorCode.invalid_request, f"this is broker {context.config.node_id}")
        return describe_broker_config(context)
    if resource_type == CONFIG_GROUP:
        if not name:
            raise KafkaError(ErrorCode.invalid_request, "Group name must not be empty")
        return describe_group_config(context, name)
    raise KafkaError(ErrorCode.invalid_request, f"unsupported resource type {resource_type}")


def _config(entry: ConfigEntry, synonyms: bool, documentation: bool) -> dict[str, Any]:
    """One config as DescribeConfigs answers it; a sensitive one's values are null, as in
    Kafka (passwords, private keys and JAAS logins never leave the broker)."""
    sensitive = entry.definition.sensitive

    def shown(value: object) -> str | None:
        return None if sensitive else format_value(value)

    return {
        "name": entry.name,
        "value": shown(entry.value),
        "read_only": entry.read_only,
        "is_default": entry.source is ConfigSource.DEFAULT_CONFIG,
        "config_source": entry.source,
        "is_sensitive": sensitive,
        "synonyms": [
            {"name": item.name, "value": shown(item.value), "source": item.source}
            for item in (entry.synonyms if synonyms else ())
        ],
        "config_type": entry.definition.type.value,
        "documentation": entry.definition.doc if documentation else None,
    }
