"""DescribeClientQuotas and AlterClientQuotas (KIP-546) over kafka-python's admin client,
for the CLI and the operator: librdkafka has no client quota APIs, and kafka-python has the
requests but no methods for them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import for_code  # type: ignore[import-untyped]
from kafka.protocol.admin import (  # type: ignore[import-untyped]
    AlterClientQuotasRequest,
    DescribeClientQuotasRequest,
)

USER, CLIENT_ID = "user", "client-id"
EXACT, DEFAULT, SPECIFIED = 0, 1, 2  # DescribeClientQuotas match types

Entity = tuple[tuple[str, str | None], ...]
"""(type, name or None for the type's default), sorted by type."""
Filter = Sequence[tuple[str, int, str | None]]
"""(entity type, match type, name) of each component a described entity must match."""


class QuotaRequestError(Exception):
    """The cluster refused a quota request; the message is Kafka's, or its error's name."""


def describe(
    admin: KafkaAdminClient, filters: Sequence[Filter], timeout_ms: int, strict: bool = False
) -> dict[Entity, dict[str, float]]:
    """The quotas of every entity matching one of ``filters``; with ``strict``, of entities
    made of the filter's components alone."""
    component = DescribeClientQuotasRequest.ComponentData
    requests = [
        DescribeClientQuotasRequest(
            components=[component(entity_type=t, match_type=m, match=n) for t, m, n in filter_],
            strict=strict,
        )
        for filter_ in filters
    ]
    found: dict[Entity, dict[str, float]] = {}
    for response in _send(admin, requests, timeout_ms):
        _raise_for(response.error_code, response.error_message)
        for entry in response.entries or ():
            key = tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity))
            found[key] = {value.key: value.value for value in entry.values}
    return found


def alter(
    admin: KafkaAdminClient, target: Entity, ops: Mapping[str, float | None], timeout_ms: int
) -> None:
    """Set (a value) or remove (None) quotas of ``target``."""
    data = AlterClientQuotasRequest.EntryData
    entry = data(
        entity=[data.EntityData(entity_type=kind, entity_name=name) for kind, name in target],
        ops=[
            data.OpData(key=key, value=value or 0.0, remove=value is None)
            for key, value in ops.items()
        ],
    )
    request = AlterClientQuotasRequest(entries=[entry], validate_only=False)
    [response] = _send(admin, [request], timeout_ms)
    for result in response.entries:
        _raise_for(result.error_code, result.error_message)


def _send(admin: KafkaAdminClient, requests: Sequence[Any], timeout_ms: int) -> list[Any]:
    """The responses to ``requests``, sent one after another on ``admin``."""
    manager = admin._manager

    async def exchange() -> list[Any]:
        return [await manager.send(request, request_timeout_ms=timeout_ms) for request in requests]

    responses: list[Any] = manager.run(exchange)
    return responses


def _raise_for(code: int, message: str | None) -> None:
    if code:
        raise QuotaRequestError(message or for_code(code).__name__)
