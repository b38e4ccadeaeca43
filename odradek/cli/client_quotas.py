"""Client quotas for the CLI (odradek.client_quota_requests on kafka-python's admin
client), configured from the same ``-X`` librdkafka properties as every other command
(the security ones translated; any other is refused by name).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from kafka import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError as KafkaPythonError  # type: ignore[import-untyped]

from odradek import client_quota_requests as quota_requests
from odradek.cli.client_options import CliError
from odradek.client_quota_requests import CLIENT_ID, DEFAULT, EXACT, SPECIFIED, USER, Entity

DEFAULT_NAME = "<default>"  # how kafka-configs shows, and Odradek takes, a type's default

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
    with _admin(args) as admin:
        return quota_requests.describe(admin, filters, _timeout_ms(args))


def alter(args: argparse.Namespace, target: Entity, ops: Mapping[str, float | None]) -> None:
    """Set (a value) or remove (None) quotas of ``target``."""
    with _admin(args) as admin:
        quota_requests.alter(admin, target, ops, _timeout_ms(args))


def _user_filter(user: str) -> list[tuple[str, int, str | None]]:
    if user == DEFAULT_NAME:
        return [(USER, DEFAULT, None)]
    return [(USER, EXACT, user)]


def _timeout_ms(args: argparse.Namespace) -> int:
    return int(args.timeout * 1000)


@contextlib.contextmanager
def _admin(args: argparse.Namespace) -> Iterator[Any]:
    """An admin client on the cluster, closed after use; its failures as ``CliError``."""
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=args.bootstrap_server.split(","),
            request_timeout_ms=_timeout_ms(args),
            client_id="odradek-cli",
            **_translated(args.client_properties),
        )
    except KafkaPythonError as error:
        raise CliError(f"cannot reach the cluster at {args.bootstrap_server}: {error}") from None
    try:
        yield admin
    except KafkaPythonError as error:
        raise CliError(f"the cluster at {args.bootstrap_server} did not answer: {error}") from None
    except quota_requests.QuotaRequestError as error:
        raise CliError(str(error)) from None
    finally:
        admin.close()


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
