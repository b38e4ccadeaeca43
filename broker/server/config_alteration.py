"""Changing topic, dynamic broker and group configs: AlterConfigs and
IncrementalAlterConfigs."""

from __future__ import annotations

import enum
import logging
from collections.abc import Iterable, Mapping

from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigError, ConfigType
from odradek.broker.config.dynamic_configs import validate_dynamic_broker_configs
from odradek.broker.config.dynamic_group_configs import GROUP_CONFIGS, validate_group_configs
from odradek.broker.config.topic_config import validate_topic_configs
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.authorization import CONFIG_GROUP
from odradek.broker.server.context import BrokerContext

log = logging.getLogger(__name__)

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
_DEFINITIONS = {
    TOPIC_RESOURCE: TOPIC_CONFIGS,
    BROKER_RESOURCE: BROKER_CONFIGS,
    CONFIG_GROUP: GROUP_CONFIGS,
}
_KINDS = {TOPIC_RESOURCE: "topic", BROKER_RESOURCE: "broker", CONFIG_GROUP: "group"}


class AlterOp(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


def current_configs(context: BrokerContext, resource_type: int, name: str) -> Mapping[str, str]:
    """The values set on the resource itself (topic overrides, dynamic broker or group
    values); a group needs no members or offsets to have configs, as in Kafka."""
    if resource_type == TOPIC_RESOURCE:
        topic = context.store.image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        return topic.configs
    if resource_type == BROKER_RESOURCE:
        _check_broker_resource(context, name)
        return context.store.image.broker_configs.get(name, {})
    if resource_type == CONFIG_GROUP:
        if not name:
            raise KafkaError(ErrorCode.invalid_request, "Default group resources are not allowed.")
        return context.store.image.group_configs.get(name, {})
    raise KafkaError(ErrorCode.invalid_request, f"resource type {resource_type} has no configs")


def apply_incremental(
    current: Mapping[str, str], changes: Iterable[tuple[str, int, str | None]], resource_type: int
) -> dict[str, str]:
    """``current`` after Kafka's SET/DELETE/APPEND/SUBTRACT operations."""
    result = dict(current)
    for name, operation, value in changes:
        try:
            op = AlterOp(operation)
        except ValueError:
            raise KafkaError(ErrorCode.invalid_request, f"unknown operation {operation}") from None
        if op is AlterOp.SET:
            result[name] = value or ""
        elif op is AlterOp.DELETE:
            result.pop(name, None)
        else:
            result[name] = _list_operation(result, name, op, value or "", resource_type)
    return result


def _list_operation(
    values: Mapping[str, str], name: str, op: AlterOp, value: str, resource_type: int
) -> str:
    definition = _DEFINITIONS[resource_type].get(name)
    if definition is None or definition.type is not ConfigType.LIST:
        raise KafkaError(ErrorCode.invalid_config, f"{name}: APPEND and SUBTRACT need a list")
    items = [item for item in values.get(name, "").split(",") if item]
    changes = [item.strip() for item in value.split(",") if item.strip()]
    if op is AlterOp.APPEND:
        items += [item for item in changes if item not in items]
    else:
        items = [item for item in items if item not in changes]
    return ",".join(items)


async def replace_configs(
    context: BrokerContext,
    resource_type: int,
    name: str,
    configs: Mapping[str, str],
    validate_only: bool,
) -> None:
    """Validate and (unless ``validate_only``) store the resource's whole config set.

    As in Kafka, a topic's or group's bad config is INVALID_CONFIG and a broker's
    INVALID_REQUEST."""
    try:
        if resource_type == TOPIC_RESOURCE:
            validate_topic_configs(configs)
        elif resource_type == CONFIG_GROUP:
            validate_group_configs(configs, context.config)
        else:
            validate_dynamic_broker_configs(configs)
    except ConfigError as error:
        code = (
            ErrorCode.invalid_config
            if resource_type in (TOPIC_RESOURCE, CONFIG_GROUP)
            else ErrorCode.invalid_request
        )
        raise KafkaError(code, str(error)) from None
    current_configs(context, resource_type, name)  # the resource must exist
    if validate_only:
        return
    if resource_type == TOPIC_RESOURCE:
        await context.store.set_topic_configs(name, dict(configs))
    elif resource_type == CONFIG_GROUP:
        await context.store.set_group_configs(name, dict(configs))
    else:
        await context.store.set_broker_configs(name, dict(configs))
    log.info("configs of %s %r are now %s", _KINDS[resource_type], name, dict(configs))


def _check_broker_resource(context: BrokerContext, name: str) -> None:
    if name and not (name.isdigit() and int(name) in context.store.image.brokers):
        raise KafkaError(ErrorCode.invalid_request, f"no broker {name!r} (use an id or '')")
