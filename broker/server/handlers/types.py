"""The shape of a request handler and of what it returns."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from odradek.broker.log.partition_log import FileRegion
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext


@dataclass(frozen=True)
class EncodedResponse:
    """A response encoded by the handler itself: bytes and file regions, in order.

    The chunks hold the body only; the connection adds size and header. No chunks: no
    response is sent (acks=0), yet ``throttle_ms`` still mutes the connection. A body
    that starts with its int32 ``throttle_time_ms`` (``throttle_first``: Fetch v1+,
    Metadata v3+) gets a longer throttle of another quota written there.
    """

    chunks: Sequence[bytes | FileRegion]
    throttle_ms: int = 0  # the client quota throttle the body carries
    throttle_first: bool = False


# A plain mapping is built into the response entity of the request's version.
Response = Mapping[str, Any] | EncodedResponse | None
Handler = Callable[[BrokerContext, Request], Coroutine[Any, Any, Response]]


@dataclass(frozen=True)
class ApiHandler:
    """A handler and the versions of its API it serves."""

    handle: Handler
    min_version: int
    max_version: int
