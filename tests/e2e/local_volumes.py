"""Storage for the real nodes: static local PersistentVolumes and a default StorageClass.

Each node gets directories of its own as ``local`` PersistentVolumes pinned to it by
node affinity; the StorageClass binds a claim only when its pod is scheduled
(WaitForFirstConsumer), so the scheduler places the pod and a volume on the same node,
as with any topology-aware provisioner. Released volumes are not reused in a session.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from e2e_kubectl import Kubectl

STORAGE_CLASS = "odradek-local"
CAPACITY = "100Gi"
"""Nominal: a local volume's capacity only has to cover the claim's request."""


def storage_class() -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": STORAGE_CLASS,
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Retain",
    }


def local_volume(name: str, node: str, path: Path, spec: dict[str, Any]) -> dict[str, Any]:
    """A ``local`` PersistentVolume at ``path`` on ``node``, with the rest of ``spec``."""
    on_node = {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "local": {"path": str(path)},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [on_node]}]}},
        },
    }


def volume(node: str, path: Path) -> dict[str, Any]:
    spec = {
        "capacity": {"storage": CAPACITY},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": STORAGE_CLASS,
    }
    return local_volume(f"{node}-{path.name}", node, path, spec)


def provide(kubectl: Kubectl, directories: dict[str, Path], count: int) -> None:
    """The StorageClass and ``count`` volumes per node, under the node's directory."""
    docs = [storage_class()]
    for node, directory in directories.items():
        for i in range(count):
            path = directory / f"volume-{i}"
            path.mkdir(parents=True, exist_ok=True)
            docs.append(volume(node, path))
    kubectl.run("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(docs))
