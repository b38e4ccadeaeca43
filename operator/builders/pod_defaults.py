"""Security defaults for every pod the operator creates: non-root, read-only root filesystem."""

from __future__ import annotations

from .meta import Obj

UID = 1000

POD_SECURITY_CONTEXT: Obj = {
    "runAsNonRoot": True,
    "runAsUser": UID,
    "runAsGroup": UID,
    "fsGroup": UID,
    "seccompProfile": {"type": "RuntimeDefault"},
}

CONTAINER_SECURITY_CONTEXT: Obj = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def field_env(name: str, field_path: str) -> Obj:
    """An environment variable from the downward API."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}
