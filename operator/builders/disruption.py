"""PodDisruptionBudgets: voluntary evictions take one pod of a component at a time."""

from __future__ import annotations

from .meta import Obj, Owner, metadata, selector_labels


def disruption_budget(owner: Owner, name: str, component: str) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(owner, name, component),
        "spec": {
            "maxUnavailable": 1,
            "selector": {"matchLabels": selector_labels(owner, component)},
        },
    }
