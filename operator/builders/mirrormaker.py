"""A MirrorMaker resource as a ConfigMap with the mirror's settings and a Deployment running it."""

from __future__ import annotations

from typing import Any

import yaml

from ..constants import (
    BROKER_CONFIG_DIR,
    CONFIG_HASH_ANNOTATION,
    HTTP_PORT,
    KAFKA_PORT,
    MIRROR_CONFIG_FILE,
)
from ..models import MirrorMakerSpec
from ..models.mirrormaker import Endpoint
from . import names
from .meta import Obj, Owner, config_hash, labels, metadata, selector_labels
from .pod_defaults import CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT


def bootstrap_for(endpoint: Endpoint, namespace: str) -> str:
    """Bootstrap servers of an endpoint; a Cluster reference resolves to its bootstrap Service."""
    if endpoint.bootstrap_servers:
        return endpoint.bootstrap_servers
    assert endpoint.cluster is not None
    return names.bootstrap_servers(endpoint.cluster, namespace, KAFKA_PORT)


def mirror_config(owner: Owner, spec: MirrorMakerSpec) -> str:
    """The file `odradek mirror --config` reads: the spec with endpoints resolved."""
    document: dict[str, Any] = spec.wire()
    for side in ("source", "target"):
        endpoint: Endpoint = getattr(spec, side)
        document[side] = {
            "alias": endpoint.alias,
            "bootstrapServers": bootstrap_for(endpoint, owner.namespace),
            "config": endpoint.config,
        }
    for key in ("image", "replicas", "resources"):
        document.pop(key, None)
    document["name"] = owner.name
    return yaml.safe_dump(document, sort_keys=True)


def mirror_objects(owner: Owner, spec: MirrorMakerSpec) -> list[Obj]:
    config = mirror_config(owner, spec)
    name = names.mirror(owner.name)
    container: Obj = {
        "name": "mirror",
        "image": spec.image,
        "args": ["mirror", "--config", f"{BROKER_CONFIG_DIR}/{MIRROR_CONFIG_FILE}"],
        "ports": [{"name": "http", "containerPort": HTTP_PORT}],
        "env": [{"name": "ODRADEK_HTTP_LISTENER", "value": f"0.0.0.0:{HTTP_PORT}"}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 10},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10},
        "securityContext": CONTAINER_SECURITY_CONTEXT,
        "volumeMounts": [
            {"name": "config", "mountPath": BROKER_CONFIG_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
        ],
    }
    if spec.resources is not None:
        container["resources"] = spec.resources.wire()
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(owner, name, "mirror"),
        "spec": {
            "replicas": spec.replicas,
            "selector": {"matchLabels": selector_labels(owner, "mirror")},
            "template": {
                "metadata": {
                    "labels": labels(owner, "mirror"),
                    "annotations": {CONFIG_HASH_ANNOTATION: config_hash(config)},
                },
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": POD_SECURITY_CONTEXT,
                    "containers": [container],
                    "volumes": [
                        {"name": "config", "configMap": {"name": name}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                    ],
                },
            },
        },
    }
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(owner, name, "mirror"),
        "data": {MIRROR_CONFIG_FILE: config},
    }
    return [config_map, deployment]
