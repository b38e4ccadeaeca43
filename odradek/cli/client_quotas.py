"""DescribeClientQuotas and AlterClientQuotas (KIP-546) for the CLI.

librdkafka has no client quota APIs, so these two requests go through kafka-python's
admin client, configured from the same ``-X`` librdkafka properties as every other
command (the security ones translated; any other is refused by name).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kafka import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError as KafkaPythonError  # type: ignore[import-untyped]
from kafka.errors import for_code
from kafka.protocol.admin import (  # type: ignore[import-untyped]
    AlterClientQuotasRequest,
    DescribeClientQuotasRequest,
)

from odradek.cli.client_options import CliError

USER, CLIENT_ID = "user", "client-id"
DEFAULT_NAME = "<default>"  # how kafka-configs shows, and Odradek takes, a type's default
EXACT, DEFAULT, SPECIFIED = 0, 1, 2  # DescribeClientQuotas match types

# librdkafka property -> kafka-python argument, for the properties a secured cluster needs.
_TRANSLATED = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
}

_NAMES_IN_CAPITALS = {"security.protocol", "sasl.mechanism", "sasl.mechanisms"}

Entity = tuple[tuple[str, str | None], ...]  # (type, name or None for the default), sorted


def entity(user: str, client_id: str | None) -> Entity:
    """The entity of a user, and of one of their client ids; ``<default>`` is the default."""
    components = [(USER, user)] + ([(CLIENT_ID, client_id)] if client_id is not None else [])
    return tuple(
        sorted((kind, None if name == DEFAULT_NAME else name) for kind, name in components)
    )


def rows(quotas: Mapping[Entity, Mapping[str, float]]) -> list[tuple[str, str, str, float]]:
    """(user, client id or "", key, value) per quota, sorted; defaults as ``<default>``."""
    found = []
    for target, values in quotas.items():
        names = dict(target)
        client_id = _shown(names[CLIENT_ID]) if CLIENT_ID in names else ""
        for key, value in values.items():
            found.append(
                (_shown(names[USER]), client_id, key, int(value) if value.is_integer() else value)
            )
    return sorted(found, key=lambda row: row[:3])


def _shown(name: str | None) -> str:
    return DEFAULT_NAME if name is None else name


def describe(args: argparse.Namespace, users: Sequence[str]) -> dict[Entity, dict[str, float]]:
    """The quotas of ``users`` (every user when empty), alone and with a client id."""
    filters = [_user_filter(user) for user in users] or [[(USER, SPECIFIED, None)]]
    component = DescribeClientQuotasRequest.ComponentData
    requests = [
        DescribeClientQuotasRequest(
            components=[component(entity_type=t, match_type=m, match=n) for t, m, n in components],
            strict=False,
        )
        for components in filters
    ]
    found: dict[Entity, dict[str, float]] = {}
    for response in _send(args, *requests):
        _raise_for(response.error_code, response.error_message)
        for entry in response.entries or ():
            key = tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity))
            found[key] = {value.key: value.value for value in entry.values}
    return found


def alter(args: argparse.Namespace, target: Entity, ops: Mapping[str, float | None]) -> None:
    """Set (a value) or remove (None) quotas of ``target``."""
    data = AlterClientQuotasRequest.EntryData
    entry = data(
        entity=[data.EntityData(entity_type=kind, entity_name=name) for kind, name in target],
        ops=[
            data.OpData(key=key, value=value or 0.0, remove=value is None)
            for key, value in ops.items()
        ],
    )
    [response] = _send(args, AlterClientQuotasRequest(entries=[entry], validate_only=False))
    for result in response.entries:
        _raise_for(result.error_code, result.error_message)


def _user_filter(user: str) -> list[tuple[str, int, str | None]]:
    if user == DEFAULT_NAME:
        return [(USER, DEFAULT, None)]
    return [(USER, EXACT, user)]


def _send(args: argparse.Namespace, *requests: Any) -> list[Any]:
    """The responses to ``requests``, sent one after another on one admin client."""
    admin = _admin(args)
    manager = admin._manager  # kafka-python has the requests but no methods for them
    timeout_ms = int(args.timeout * 1000)

    async def exchange() -> list[Any]:
        return [await manager.send(request, request_timeout_ms=timeout_ms) for request in requests]

    try:
        responses: list[Any] = manager.run(exchange)
        return responses
    except KafkaPythonError as error:
        raise CliError(f"the cluster at {args.bootstrap_server} did not answer: {error}") from None
    finally:
        admin.close()


def _admin(args: argparse.Namespace) -> Any:
    try:
        return KafkaAdminClient(
            bootstrap_servers=args.bootstrap_server.split(","),
            request_timeout_ms=int(args.timeout * 1000),
            client_id="odradek-cli",
            **_translated(args.client_properties),
        )
    except KafkaPythonError as error:
        raise CliError(f"cannot reach the cluster at {args.bootstrap_server}: {error}") from None


def _translated(properties: Iterable[tuple[str, str]]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, value in properties:
        if key == "ssl.endpoint.identification.algorithm":
            kwargs["ssl_check_hostname"] = value.lower() == "https"
        elif key in _TRANSLATED:
            kwargs[_TRANSLATED[key]] = value.upper() if key in _NAMES_IN_CAPITALS else value
        else:
            raise CliError(f"-X {key}: quota commands take only the security properties")
    return kwargs


def _raise_for(code: int, message: str | None) -> None:
    if code:
        raise CliError(message or for_code(code).__name__)
