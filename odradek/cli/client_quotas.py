"""Client quotas for the CLI: odradek.client_quota_requests on kafka-python's admin
client (``kafka_python_admin``)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from odradek import client_quota_requests as quota_requests
from odradek.cli.client_options import CliError
from odradek.cli.kafka_python_admin import admin_client, timeout_ms
from odradek.client_quota_requests import CLIENT_ID, DEFAULT, EXACT, SPECIFIED, USER, Entity

DEFAULT_NAME = "<default>"  # how kafka-configs shows, and Odradek takes, a type's default


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
        return quota_requests.describe(admin, filters, timeout_ms(args))


def alter(args: argparse.Namespace, target: Entity, ops: Mapping[str, float | None]) -> None:
    """Set (a value) or remove (None) quotas of ``target``."""
    with _admin(args) as admin:
        quota_requests.alter(admin, target, ops, timeout_ms(args))


def _user_filter(user: str) -> list[tuple[str, int, str | None]]:
    if user == DEFAULT_NAME:
        return [(USER, DEFAULT, None)]
    return [(USER, EXACT, user)]


@contextlib.contextmanager
def _admin(args: argparse.Namespace) -> Iterator[Any]:
    """An admin client on the cluster; a refused quota request as ``CliError``."""
    with admin_client(args) as admin:
        try:
            yield admin
        except quota_requests.QuotaRequestError as error:
            raise CliError(str(error)) from None
