"""The three CustomResourceDefinitions: names, columns and subresources around the models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..constants import CATEGORY, GROUP, VERSION
from ..models import (
    ClusterSpec,
    ClusterStatus,
    MirrorMakerSpec,
    MirrorMakerStatus,
    TopicSpec,
    TopicStatus,
    UserSpec,
    UserStatus,
)
from .openapi import structural_schema

_READY = '.status.conditions[?(@.type=="Ready")].status'
_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


@dataclass(frozen=True)
class Resource:
    """One custom resource kind and how the API server should present it."""

    kind: str
    plural: str
    short_names: tuple[str, ...]
    spec: type[BaseModel]
    status: type[BaseModel]
    columns: tuple[dict[str, Any], ...]
    scale: bool = False
    description: str = ""

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"


RESOURCES = (
    Resource(
        kind="Cluster",
        plural="clusters",
        short_names=("odc",),
        spec=ClusterSpec,
        status=ClusterStatus,
        scale=True,
        description="An Odradek cluster: Kafka-compatible brokers and their etcd store.",
        columns=(
            {"name": "Brokers", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": _READY},
            {"name": "Bootstrap", "type": "string", "jsonPath": ".status.bootstrapServers"},
            {
                "name": "Controller",
                "type": "integer",
                "jsonPath": ".status.controller",
                "priority": 1,
            },
        ),
    ),
    Resource(
        kind="Topic",
        plural="topics",
        short_names=("odt",),
        spec=TopicSpec,
        status=TopicStatus,
        description="A Kafka topic on an Odradek Cluster in the same namespace.",
        columns=(
            {"name": "Cluster", "type": "string", "jsonPath": ".spec.cluster"},
            {"name": "Partitions", "type": "integer", "jsonPath": ".spec.partitions"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": _READY},
        ),
    ),
    Resource(
        kind="MirrorMaker",
        plural="mirrormakers",
        short_names=("odmm",),
        spec=MirrorMakerSpec,
        status=MirrorMakerStatus,
        description="Topics and consumer group offsets mirrored from one cluster to another.",
        columns=(
            {"name": "Source", "type": "string", "jsonPath": ".spec.source.alias"},
            {"name": "Target", "type": "string", "jsonPath": ".spec.target.alias"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ready", "type": "string", "jsonPath": _READY},
        ),
    ),
    Resource(
        kind="User",
        plural="users",
        short_names=("odu",),
        spec=UserSpec,
        status=UserStatus,
        description="A client of an Odradek Cluster in the same namespace: its credential,"
        " ACLs and quotas, and a Secret with what it needs to connect.",
        columns=(
            {"name": "Cluster", "type": "string", "jsonPath": ".spec.cluster"},
            {"name": "Authentication", "type": "string", "jsonPath": ".spec.authentication.type"},
            {"name": "Secret", "type": "string", "jsonPath": ".status.secret"},
            {"name": "Ready", "type": "string", "jsonPath": _READY},
        ),
    ),
)


def crd(resource: Resource) -> dict[str, Any]:
    """The CustomResourceDefinition of one resource."""
    subresources: dict[str, Any] = {"status": {}}
    if resource.scale:
        subresources["scale"] = {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": resource.crd_name,
            "labels": {"app.kubernetes.io/part-of": "odradek"},
        },
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": resource.kind,
                "listKind": f"{resource.kind}List",
                "plural": resource.plural,
                "singular": resource.kind.lower(),
                "shortNames": list(resource.short_names),
                "categories": [CATEGORY],
            },
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": _root_schema(resource)},
                    "subresources": subresources,
                    "additionalPrinterColumns": [*resource.columns, _AGE],
                }
            ],
        },
    }


def _root_schema(resource: Resource) -> dict[str, Any]:
    return {
        "type": "object",
        "description": resource.description,
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": structural_schema(resource.spec),
            "status": structural_schema(resource.status),
        },
    }
