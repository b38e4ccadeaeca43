"""Requests of any API on the wire, as a logged-in SASL/PLAIN user, for tests that judge
the error codes the broker answers with (authorization): a request is written as a dict
of the fields that matter; every other field takes a neutral value (empty, zero, null)."""

from __future__ import annotations

import dataclasses
import datetime
import types
import typing
import uuid
from typing import Any

from kafka_wire import WireClient, load_request_schema
from sasl_wire import authenticate, handshake, plain_token

from odradek.broker.protocol.entity_builder import build_entity


class Session:
    """One connection to a SASL_PLAINTEXT listener, logged in as ``user`` with PLAIN."""

    def __init__(self, bootstrap: str, user: str, password: str) -> None:
        self.user = user
        self.wire = WireClient.to(bootstrap)
        assert handshake(self.wire, "PLAIN").error_code.value == 0
        answer = authenticate(self.wire, plain_token(user, password))
        assert answer.error_code.value == 0, f"{user} could not log in: {answer!r}"

    def call(self, api_key: int, version: int, **fields: Any) -> Any:
        schema = load_request_schema(api_key, version)
        return self.wire.call(api_key, version, build_entity(schema, filled(schema, fields)))

    def close(self) -> None:
        self.wire.close()


def filled(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a neutral value for each field of ``cls`` it leaves out, recursively."""
    hints = typing.get_type_hints(cls)
    result: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        hint = hints[field.name]
        if field.name in data:
            result[field.name] = _nested(hint, data[field.name])
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            result[field.name] = _neutral(hint)
    return result


def _nested(hint: Any, value: Any) -> Any:
    """Fill the entities given as dicts inside a field's value."""
    element = _element_type(hint)
    if element is not None and isinstance(value, list | tuple):
        return [filled(element, v) if isinstance(v, dict) else v for v in value]
    entity = _entity_type(hint)
    if entity is not None and isinstance(value, dict):
        return filled(entity, value)
    return value


def _element_type(hint: Any) -> type | None:
    for option in _options(hint):
        if typing.get_origin(option) is tuple:
            element = typing.get_args(option)[0]
            return element if dataclasses.is_dataclass(element) else None
    return None


def _entity_type(hint: Any) -> type | None:
    return next((o for o in _options(hint) if dataclasses.is_dataclass(o)), None)


def _options(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def _neutral(hint: Any) -> Any:
    options = _options(hint)
    if type(None) in options:
        return None
    option = options[0]
    base = getattr(option, "__supertype__", option)  # NewType (i32, ...)
    if typing.get_origin(option) is tuple:
        return ()
    if dataclasses.is_dataclass(option):
        return filled(option, {})
    if isinstance(base, type) and issubclass(base, datetime.timedelta):
        return datetime.timedelta(0)
    if base is str:
        return ""
    if base is bytes:
        return b""
    if base is bool:
        return False
    if base is uuid.UUID:
        return uuid.UUID(int=0)
    return 0
