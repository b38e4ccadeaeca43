"""Object metadata: owner references, names and labels shared by every builder."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..constants import API_VERSION

Obj = dict[str, Any]

MANAGED_BY = "odradek-operator"


@dataclass(frozen=True)
class Owner:
    """The custom resource that owns the objects built for it."""

    kind: str
    name: str
    namespace: str
    uid: str

    def reference(self) -> Obj:
        return {
            "apiVersion": API_VERSION,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }


def selector_labels(owner: Owner, component: str) -> dict[str, str]:
    """Labels that select one component's pods; never changed once set."""
    return {
        "app.kubernetes.io/name": "odradek",
        "app.kubernetes.io/instance": owner.name,
        "app.kubernetes.io/component": component,
    }


def labels(owner: Owner, component: str) -> dict[str, str]:
    return {**selector_labels(owner, component), "app.kubernetes.io/managed-by": MANAGED_BY}


def metadata(owner: Owner, name: str, component: str) -> Obj:
    return {
        "name": name,
        "namespace": owner.namespace,
        "labels": labels(owner, component),
        "ownerReferences": [owner.reference()],
    }


def label_selector_string(selector: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))


def config_hash(text: str) -> str:
    """Short digest put on a pod template, so a configuration change restarts the pods."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]
