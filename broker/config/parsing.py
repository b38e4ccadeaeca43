"""Turning configuration text into typed values, with errors that name the key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from odradek.broker.config.definitions import ConfigDef, ConfigError, ConfigType

LISTENER_PREFIX = "listener.name."
_INTEGER_RANGES = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1),
    ConfigType.INT: (-(2**31), 2**31 - 1),
    ConfigType.LONG: (-(2**63), 2**63 - 1),
}


def parse_value(definition: ConfigDef, text: str) -> object:
    """Parse one value of ``definition`` from its text form and validate it."""
    name = definition.name
    text = text.strip()
    value: object
    if definition.type in _INTEGER_RANGES:
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(f"{name}: {text!r} is not a whole number") from None
        low, high = _INTEGER_RANGES[definition.type]
        if not low <= value <= high:
            raise ConfigError(f"{name}: {text} is out of range")
    elif definition.type is ConfigType.BOOLEAN:
        lowered = text.lower()
        if lowered not in ("true", "false"):
            raise ConfigError(f"{name}: {text!r} is not true or false")
        value = lowered == "true"
    elif definition.type is ConfigType.DOUBLE:
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"{name}: {text!r} is not a number") from None
    elif definition.type is ConfigType.LIST:
        value = [item.strip() for item in text.split(",") if item.strip()]
    else:
        value = text
    if definition.validator is not None:
        definition.validator(name, value)
    return value


def format_value(value: object) -> str | None:
    """Kafka's text form of a typed value (what DescribeConfigs shows)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)


def parse_values(
    definitions: Mapping[str, ConfigDef], values: Mapping[str, str]
) -> dict[str, object]:
    """Parse a mapping of text values; an unknown key is an error naming it."""
    parsed: dict[str, object] = {}
    for name, text in values.items():
        definition = definition_of(definitions, name)
        if definition is None:
            raise ConfigError(f"{name}: unknown configuration key")
        parsed[name] = parse_value(replace(definition, name=name), text)
    return parsed


def definition_of(definitions: Mapping[str, ConfigDef], name: str) -> ConfigDef | None:
    """The definition of ``name``, also for one listener's own value of a per-listener key
    (``listener.name.<listener>.<key>``) and one mechanism's of a per-mechanism key
    (``listener.name.<listener>.<mechanism>.<key>``), as Kafka accepts them."""
    found = definitions.get(name)
    if found is not None or not name.startswith(LISTENER_PREFIX):
        return found
    key = name[len(LISTENER_PREFIX) :].partition(".")[2]
    found = definitions.get(key)
    if found is not None:
        return found if found.per_listener else None
    found = definitions.get(key.partition(".")[2])
    return found if found is not None and found.per_mechanism else None
