"""``share.auto.offset.reset`` (KIP-932): where a share group starts reading a partition it
has no state for, in Kafka's syntax: ``latest``, ``earliest`` or
``by_duration:<ISO-8601 duration>`` (Kafka's ShareGroupAutoOffsetResetStrategy)."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from odradek.broker.config.definitions import ConfigError

_BY_DURATION_PREFIX = "by_duration:"
_NANOS_PER_MS = 1_000_000
# java.time.Duration.parse's grammar: PnDTnHnMn.nS, each part signed and optional.
_ISO_8601_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE,
)


class ResetStrategy(enum.Enum):
    LATEST = "latest"
    EARLIEST = "earliest"
    BY_DURATION = "by_duration"


@dataclass(frozen=True)
class ShareAutoOffsetReset:
    """A parsed ``share.auto.offset.reset``; ``duration_ms`` is how far back from now a
    ``by_duration`` strategy starts (the first offset at or after now - duration)."""

    strategy: ResetStrategy
    duration_ms: int = 0


def parse_share_auto_offset_reset(text: str) -> ShareAutoOffsetReset:
    """The strategy ``text`` names; ValueError if it is none of Kafka's (``none`` is a
    consumer's strategy, not a share group's; a negative duration is refused)."""
    if text in (ResetStrategy.LATEST.value, ResetStrategy.EARLIEST.value):
        return ShareAutoOffsetReset(ResetStrategy(text))
    if text.startswith(_BY_DURATION_PREFIX):
        nanos = iso_duration_nanos(text[len(_BY_DURATION_PREFIX) :])
        if nanos >= 0:
            return ShareAutoOffsetReset(ResetStrategy.BY_DURATION, nanos // _NANOS_PER_MS)
    raise ValueError(f"{text!r} is not a share group's auto offset reset strategy")


def iso_duration_nanos(text: str) -> int:
    """An ISO-8601 duration in nanoseconds, as java.time.Duration.parse reads it; ValueError
    if ``text`` is not one."""
    match = _ISO_8601_DURATION.fullmatch(text)
    parts = (2, 4, 5, 6)  # days, hours, minutes, seconds
    if match is None or match[3] in ("T", "t") or not any(match[part] for part in parts):
        raise ValueError(f"{text!r} is not an ISO-8601 duration (PnDTnHnMn.nS)")
    days, hours, minutes, seconds = (int(match[part] or 0) for part in parts)
    fraction = int((match[7] or "").ljust(9, "0"))
    if match[6] and match[6].startswith("-"):
        fraction = -fraction  # the fraction takes the sign of the seconds, as in Java
    nanos = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1_000_000_000 + fraction
    return -nanos if match[1] == "-" else nanos


def validate_share_auto_offset_reset(name: str, value: object) -> None:
    """A ``ConfigDef`` validator, refusing in Kafka's words."""
    try:
        parse_share_auto_offset_reset(str(value))
    except ValueError:
        raise ConfigError(
            f"Invalid value `{value}` for configuration {name}. The value must be either "
            "'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
        ) from None
