"""Build kio's versioned entities from plain, version-independent data.

Handlers describe a response once, as nested dicts and lists with Kafka's field
names; ``build_entity`` instantiates the classes of the negotiated version,
dropping fields that version lacks and converting error codes, durations and
nested entities. Fields a version has but the data omits take their defaults.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import importlib
import os
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kio.schema.errors import ErrorCode
from kio.static.primitive import i32Timedelta, i64Timedelta

E = TypeVar("E")
Converter = Callable[[Any], Any]


# Set by the test suite: a key that no version of an entity has (a typo, a field of
# another API) is then an error instead of being dropped like a field that only some
# versions have.
STRICT_ENV = "ODRADEK_STRICT_RESPONSES"


def build_entity(cls: type[E], data: Mapping[str, Any]) -> E:
    """Instantiate ``cls`` from ``data``; keys ``cls`` does not have are ignored."""
    if os.environ.get(STRICT_ENV) == "1":
        unknown = set(data) - _fields_of_every_version(cls.__module__, cls.__name__)
        if unknown:
            raise KeyError(f"{cls.__module__}.{cls.__name__} has no field {sorted(unknown)}")
    kwargs = {}
    for name, convert in _converters(cls):
        if name in data:
            kwargs[name] = convert(data[name])
    return cls(**kwargs)


_CONVERTERS: dict[type, tuple[tuple[str, Converter], ...]] = {}


@functools.cache
def _fields_of_every_version(module: str, name: str) -> frozenset[str]:
    """Field names of entity ``name`` in any version of its schema
    (``kio.schema.<api>.v<N>.<kind>``; other modules: in that module only)."""
    package, version, kind = module.rsplit(".", 2)
    if not version.startswith("v"):
        return frozenset(
            field.name
            for field in dataclasses.fields(getattr(importlib.import_module(module), name))
        )
    names: set[str] = set()
    for number in range(64):
        try:
            versioned = importlib.import_module(f"{package}.v{number}.{kind}")
        except ModuleNotFoundError:
            continue
        sibling = getattr(versioned, name, None)
        if sibling is not None and dataclasses.is_dataclass(sibling):
            names.update(field.name for field in dataclasses.fields(sibling))
    return frozenset(names)


def _converters(cls: type) -> tuple[tuple[str, Converter], ...]:
    converters = _CONVERTERS.get(cls)
    if converters is None:
        hints = typing.get_type_hints(cls)
        converters = tuple(
            (field.name, _converter_for(hints[field.name], field.metadata.get("kafka_type")))
            for field in dataclasses.fields(cls)
            if field.init
        )
        _CONVERTERS[cls] = converters
    return converters


def _identity(value: Any) -> Any:
    return value


def _error_code(value: Any) -> ErrorCode:
    return value if isinstance(value, ErrorCode) else ErrorCode(int(value))


def _duration(kind: type[datetime.timedelta]) -> Converter:
    def convert(value: Any) -> Any:
        delta = (
            value
            if isinstance(value, datetime.timedelta)
            else datetime.timedelta(milliseconds=int(value))
        )
        return kind.parse(delta)  # type: ignore[attr-defined]

    return convert


def _timestamp(value: Any) -> datetime.datetime | None:
    """Milliseconds since the epoch; Kafka's -1 means none."""
    if isinstance(value, datetime.datetime) or value is None:
        return value
    if value < 0:
        return None
    return datetime.datetime.fromtimestamp(value / 1000, tz=datetime.UTC)


def _converter_for(hint: Any, kafka_type: str | None) -> Converter:
    if kafka_type == "error_code":
        return _error_code
    if kafka_type == "timedelta_i32":
        return _duration(i32Timedelta)
    if kafka_type == "timedelta_i64":
        return _duration(i64Timedelta)
    if kafka_type == "datetime_i64":
        return _timestamp
    inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) is tuple and inner and _is_entity_class(inner[0]):
        element = inner[0]
        return lambda items: tuple(_build_nested(element, item) for item in items)
    if typing.get_origin(hint) in (typing.Union, _UnionType) and len(inner) == 1:
        nested = _converter_for(inner[0], kafka_type)
        return lambda value: None if value is None else nested(value)
    if _is_entity_class(hint):
        return lambda value: _build_nested(hint, value)
    return _identity


_UnionType = type(int | None)


def _is_entity_class(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _build_nested(cls: type[E], value: Any) -> E:
    return value if isinstance(value, cls) else build_entity(cls, value)
