"""DescribeClientQuotas v0-1: the client quotas of the metadata image that a filter
selects, as Kafka's ``ClientQuotasImage.describe``: exact names, defaults, any entity of a
type, and ``strict`` (nothing beyond the filter's types). A filter Kafka refuses is refused
with Kafka's error and message."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.security.client_quota import (
    ENTITY_TYPES,
    USER,
    QuotaEntity,
    QuotaValues,
    check_filter_components,
    matches,
)
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        context.authorization.check_cluster(request, AclOperation.DESCRIBE_CONFIGS)
        exact, specified = check_filter(request.body.components)
        quotas = context.store.image.client_quotas
        entries = [
            {"entity": entity_data(entity), "values": _values(values)}
            for entity, values in quotas.items()
            if matches(entity, exact, specified, request.body.strict)
        ]
        return {"entries": entries, "error_message": ""}  # Kafka's schema default, not null

    return {"throttle_time": 0, **answer_or_error(answer, {"entries": None}, "error_message")}


def check_filter(components: Any) -> tuple[dict[str, str | None], set[str]]:
    """The filter's exact components (None: the default) and specified types; Kafka's
    error for a filter it refuses."""
    seen: set[str] = set()
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for component in components:
        kind = component.entity_type
        if not kind:
            raise _invalid("Invalid empty entity type.")
        if kind in seen:
            raise _invalid(f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in ENTITY_TYPES:
            raise KafkaError(ErrorCode.unsupported_version, f"Unsupported entity type {kind}")
        seen.add(kind)
        _check_match(component.match_type, component.match)
        if component.match_type == MATCH_SPECIFIED:
            specified.add(kind)
        else:
            exact[kind] = component.match
    check_filter_components(exact, specified)
    return exact, specified


def entity_data(entity: QuotaEntity) -> list[dict[str, Any]]:
    """An entity as both APIs answer it, user first as Kafka's tools read it."""
    ordered = sorted(entity, key=lambda component: component[0] != USER)
    return [{"entity_type": kind, "entity_name": name} for kind, name in ordered]


def _values(values: QuotaValues) -> list[dict[str, Any]]:
    return [{"key": key, "value": value} for key, value in sorted(values.items())]


def _check_match(match_type: int, match: str | None) -> None:
    if match_type == MATCH_EXACT and match is None:
        raise _invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
    if match_type == MATCH_DEFAULT and match is not None:
        raise _invalid("Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
    if match_type == MATCH_SPECIFIED and match is not None:
        raise _invalid("Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
    if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED):
        raise _invalid(f"Unknown match type {match_type}")


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.invalid_request, message)
