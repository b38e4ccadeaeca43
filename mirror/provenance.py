"""The provenance header: where a mirrored record came from.

Value ``<source alias>/<topic>/<partition>/<offset>`` (ASCII). Aliases and
topic names cannot contain ``/``, so the value splits unambiguously. With the
identity naming policy the header is also what stops a record from looping:
a record whose header names the target as its source is not mirrored back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .constants import PROVENANCE_HEADER

Headers = Sequence[tuple[str, bytes | None]]


@dataclass(frozen=True)
class Provenance:
    alias: str
    topic: str
    partition: int
    offset: int

    def header(self) -> tuple[str, bytes]:
        value = f"{self.alias}/{self.topic}/{self.partition}/{self.offset}"
        return PROVENANCE_HEADER, value.encode("ascii")

    @classmethod
    def parse(cls, value: bytes) -> Provenance:
        """Raises ValueError when ``value`` is not a provenance header value."""
        alias, topic, partition, offset = value.decode("ascii").split("/")
        return cls(alias, topic, int(partition), int(offset))


def provenance_of(headers: Headers | None) -> Provenance | None:
    """The last provenance header of a record (the most recent hop), if any and valid."""
    for key, value in reversed(headers or ()):
        if key == PROVENANCE_HEADER and value is not None:
            try:
                return Provenance.parse(value)
            except ValueError:
                return None
    return None


def originates_from(headers: Headers | None, alias: str) -> bool:
    """A record mirrored at some hop out of the cluster ``alias``."""
    return any(
        key == PROVENANCE_HEADER and value is not None and value.startswith(f"{alias}/".encode())
        for key, value in headers or ()
    )
