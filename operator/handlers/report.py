"""Writing a resource's status, with an Event whenever its Ready condition says something new."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..builders.meta import Obj
from ..planning.conditions import READY, Verdict, conditions
from .context import Context, Log


def report(
    ctx: Context,
    body: Mapping[str, Any],
    verdicts: Sequence[Verdict],
    fields: Obj,
    model: type[BaseModel],
    logger: Log,
) -> Obj:
    """Write status (checked against the CRD's model) and explain changes in an Event."""
    meta = body["metadata"]
    previous = (body.get("status") or {}).get("conditions") or []
    generation = int(meta.get("generation", 1))
    status = model.model_validate(
        {
            **fields,
            "observedGeneration": generation,
            "conditions": conditions(verdicts, generation, previous, ctx.timestamp()),
        }
    ).model_dump(by_alias=True, exclude_none=True, mode="json")
    ctx.kube.patch_status(body["apiVersion"], body["kind"], meta["name"], meta["namespace"], status)
    ready = next(v for v in verdicts if v.type == READY)
    before: dict[str, Any] = next((c for c in previous if c.get("type") == READY), {})
    if (before.get("reason"), before.get("message")) != (ready.reason, ready.message):
        level = "Normal" if ready.status or not _refusal(verdicts) else "Warning"
        ctx.kube.event(dict(body), level, ready.reason, ready.message)
        logger.info("%s %s: %s", body["kind"], meta["name"], ready.message)
    return status


def _refusal(verdicts: Sequence[Verdict]) -> bool:
    return any(v.type == "Degraded" and v.status for v in verdicts)
