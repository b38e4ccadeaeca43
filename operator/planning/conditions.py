"""Status conditions (Ready, Progressing, Degraded) with observedGeneration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

READY = "Ready"
PROGRESSING = "Progressing"
DEGRADED = "Degraded"


@dataclass(frozen=True)
class Verdict:
    """One condition as a planner decides it; the time is filled in when it is written."""

    type: str
    status: bool
    reason: str
    message: str


def conditions(
    verdicts: Sequence[Verdict],
    generation: int,
    previous: Sequence[dict[str, Any]],
    now: str,
) -> list[dict[str, Any]]:
    """Conditions for ``generation``; lastTransitionTime moves only when the status flips."""
    before = {c.get("type"): c for c in previous}
    result = []
    for verdict in verdicts:
        status = "True" if verdict.status else "False"
        old = before.get(verdict.type)
        kept = old is not None and old.get("status") == status
        since = old.get("lastTransitionTime", now) if kept and old is not None else now
        result.append(
            {
                "type": verdict.type,
                "status": status,
                "reason": verdict.reason,
                "message": verdict.message,
                "observedGeneration": generation,
                "lastTransitionTime": since,
            }
        )
    return result


def ready(reason: str, message: str) -> list[Verdict]:
    return [
        Verdict(READY, True, reason, message),
        Verdict(PROGRESSING, False, reason, ""),
        Verdict(DEGRADED, False, reason, ""),
    ]


def progressing(reason: str, message: str, degraded: str = "") -> list[Verdict]:
    return [
        Verdict(READY, False, reason, message),
        Verdict(PROGRESSING, True, reason, message),
        Verdict(DEGRADED, bool(degraded), reason if degraded else "AsExpected", degraded),
    ]


def failed(reason: str, message: str) -> list[Verdict]:
    """Refused or broken: not progressing until the user changes something."""
    return [
        Verdict(READY, False, reason, message),
        Verdict(PROGRESSING, False, reason, message),
        Verdict(DEGRADED, True, reason, message),
    ]
