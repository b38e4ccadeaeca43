"""DescribeClientQuotas v0-1. Odradek has no client quotas yet, so every filter Kafka
accepts matches nothing; a filter Kafka refuses is refused with Kafka's error and message
(``ClientQuotasImage.describe``). `kafka-configs --describe --entity-type users` asks for
quotas before SCRAM credentials, and needs this answer to get to them."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error

ENTITY_TYPES = ("user", "client-id", "ip")
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        check_filter(request.body.components)
        return {"entries": [], "error_message": ""}  # Kafka's schema default, not null

    return {"throttle_time": 0, **answer_or_error(answer, {"entries": None}, "error_message")}


def check_filter(components: Any) -> None:
    """Raise Kafka's error for a filter it refuses."""
    seen: set[str] = set()
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
    if "ip" in seen and seen & {"user", "client-id"}:
        raise _invalid(
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component."
        )


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
