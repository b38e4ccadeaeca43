"""Where client quotas meet a connection: the request quota measured around the handler,
``throttle_time`` filled in the responses that have it, and how long to mute the
connection (the longest throttle of any quota the request hit).

Request time is what Kafka counts as I/O thread time: the handler's own steps on the
event loop, not the time it waits (a long-polling fetch, an acks=all produce), measured
only while a ``request_percentage`` quota is set somewhere."""

from __future__ import annotations

import datetime
import functools
import time
from collections.abc import Coroutine, Generator, Mapping
from dataclasses import fields, replace
from typing import Any

from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.framing import Request, response_schema
from odradek.broker.protocol.wire_primitives import INT32
from odradek.broker.server.client_quota_manager import (
    ClientQuotaManager,
    QuotaType,
    current_mutation_quota,
)
from odradek.broker.server.handlers.types import EncodedResponse, Response

THROTTLE_FIELD = "throttle_time"
# The versions from which a mutation over the quota is refused (before: counted, throttled).
_STRICT_MUTATIONS_FROM: dict[int, int] = {
    ApiKey.CREATE_TOPICS: 6,
    ApiKey.DELETE_TOPICS: 5,
    ApiKey.CREATE_PARTITIONS: 3,
    ApiKey.METADATA: 2**15,  # auto-creation: always permissive
}
REPLICA_STATE_FROM = 15  # Fetch: the follower's id moved into ReplicaState (KIP-903)


async def throttled(
    quotas: ClientQuotaManager,
    request: Request,
    handling: Coroutine[Any, Any, Response],
    started: float,
) -> tuple[Response, int]:
    """The handler's response, with the request quota's throttle filled in, and the
    milliseconds the connection should then not be read."""
    header = request.header
    mutation = None
    strict_from = _STRICT_MUTATIONS_FROM.get(header.api_key)
    if strict_from is not None and quotas.active(QuotaType.CONTROLLER_MUTATION):
        strict = header.api_version >= strict_from
        mutation = quotas.mutation_quota(request.principal, header.client_id, strict)
        current_mutation_quota.set(mutation)
    throttle_ms = 0
    if quotas.active(QuotaType.REQUEST) and not is_from_follower(request):
        timer = _StepTimer(handling, time.perf_counter() - started)
        response = await timer
        percent_s = timer.busy_s * 100  # Kafka: a request's thread time as percent-seconds
        throttle_ms = quotas.record(
            QuotaType.REQUEST, request.principal, request.header.client_id, percent_s
        )
    else:
        response = await handling
    if mutation is not None:
        current_mutation_quota.set(None)
        throttle_ms = max(throttle_ms, mutation.throttle_ms())
    if isinstance(response, EncodedResponse):
        if throttle_ms > response.throttle_ms and response.throttle_first:
            response = _with_throttle(response, throttle_ms)
        return response, max(response.throttle_ms, throttle_ms)
    if isinstance(response, Mapping):
        own = _milliseconds(response.get(THROTTLE_FIELD, 0))
        if throttle_ms > own and _has_throttle_field(header.api_key, header.api_version):
            response = {**response, THROTTLE_FIELD: throttle_ms}
        return response, max(own, throttle_ms)
    return response, throttle_ms


def _with_throttle(response: EncodedResponse, throttle_ms: int) -> EncodedResponse:
    """``response`` with ``throttle_ms`` in the throttle field its body starts with."""
    first, *rest = response.chunks
    assert isinstance(first, bytes), "a body starting with its throttle starts with bytes"
    return replace(response, chunks=[INT32.pack(throttle_ms) + first[4:], *rest],
                   throttle_ms=throttle_ms)  # fmt: skip


def is_from_follower(request: Request) -> bool:
    """A replica's fetch: replication traffic, exempt from client quotas as in Kafka."""
    if request.header.api_key != ApiKey.FETCH:
        return False
    body = request.body
    if request.header.api_version >= REPLICA_STATE_FROM:
        return bool(body.replica_state.replica_id >= 0)
    return bool(body.replica_id >= 0)


@functools.cache
def _has_throttle_field(api_key: int, api_version: int) -> bool:
    schema = response_schema(api_key, api_version)
    return any(field.name == THROTTLE_FIELD for field in fields(schema))


def _milliseconds(value: int | datetime.timedelta) -> int:
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    return int(value)


class _StepTimer:
    """Awaits a coroutine, adding up the time its own steps run on the event loop."""

    def __init__(self, coroutine: Coroutine[Any, Any, Response], busy_s: float) -> None:
        self._coroutine = coroutine
        self.busy_s = busy_s

    def __await__(self) -> Generator[Any, Any, Response]:
        coroutine = self._coroutine
        value: Any = None
        error: BaseException | None = None
        while True:
            start = time.perf_counter()
            try:
                yielded = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                response: Response = stop.value
                return response
            finally:
                self.busy_s += time.perf_counter() - start
            try:
                value, error = (yield yielded), None
            except BaseException as raised:  # cancellation goes on into the handler
                value, error = None, raised
