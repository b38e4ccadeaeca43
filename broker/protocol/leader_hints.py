"""KIP-951 leader hints: where a partition's leader is now, carried in Produce (v10+) and
Fetch (v16+) answers of NOT_LEADER_OR_FOLLOWER, so a client need not ask Metadata first."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from odradek.broker.protocol.wire_primitives import array_length, nullable_string, string

_LEADER = struct.Struct(">ii")
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class CurrentLeader:
    leader_id: int
    leader_epoch: int

    def encoded(self) -> bytes:
        """The LeaderIdAndEpoch struct, with its empty tagged-field section."""
        return _LEADER.pack(self.leader_id, self.leader_epoch) + b"\0"


@dataclass(frozen=True, slots=True)
class NodeEndpoint:
    node_id: int
    host: str
    port: int
    rack: str | None = None


def encode_node_endpoints(endpoints: Sequence[NodeEndpoint]) -> bytes:
    """The NodeEndpoints array of a flexible response."""
    out = bytearray(array_length(len(endpoints), True))
    for endpoint in endpoints:
        out += _I32.pack(endpoint.node_id) + string(endpoint.host, True)
        out += _I32.pack(endpoint.port) + nullable_string(endpoint.rack, True) + b"\0"
    return bytes(out)
