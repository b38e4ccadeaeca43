"""A MirrorMaker resource as a ConfigMap with the mirror's settings and a Deployment running it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from ..constants import (
    BROKER_CONFIG_DIR,
    CA_CERT_KEY,
    CONFIG_HASH_ANNOTATION,
    HTTP_PORT,
    KAFKA_PORT,
    MIRROR_CONFIG_FILE,
)
from ..models import ClusterSpec, MirrorMakerSpec
from ..models.cluster import Listener
from ..models.mirrormaker import Endpoint
from . import names
from .meta import Obj, Owner, config_hash, labels, metadata, selector_labels
from .pod_defaults import CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT
from .user_secret import PASSWORD_KEY, USER_CERT_KEY, USER_KEY_KEY, USERNAME_KEY

MIRROR_CA_DIR = "/etc/odradek/ca"
"""Where the CA of each side's Cluster is mounted, when the mirror reaches it over TLS."""
MIRROR_USERS_DIR = "/etc/odradek/users"
"""Where the Secret of each side's User is mounted."""
SIDES = ("source", "target")


def listener_of(cluster: ClusterSpec, name: str | None) -> Listener | None:
    """The listener ``name`` of ``cluster`` (its first when None); None if it has none."""
    if name is None:
        return cluster.listeners[0]
    return next((listener for listener in cluster.listeners if listener.name == name), None)


def bootstrap_for(endpoint: Endpoint, namespace: str, cluster: ClusterSpec | None) -> str:
    """Bootstrap servers of an endpoint; a Cluster reference (``cluster``, its spec)
    resolves to its bootstrap Service on the chosen listener's port."""
    if endpoint.bootstrap_servers:
        return endpoint.bootstrap_servers
    assert endpoint.cluster is not None
    listener = listener_of(cluster or ClusterSpec(), endpoint.listener)
    port = listener.port if listener is not None else KAFKA_PORT
    return names.bootstrap_servers(endpoint.cluster, namespace, port)


def _trusted_ca(endpoint: Endpoint, cluster: ClusterSpec | None) -> str | None:
    """The Secret with the CA to trust for ``endpoint``: its Cluster's, on a TLS listener."""
    if endpoint.cluster is None or cluster is None:
        return None
    listener = listener_of(cluster, endpoint.listener)
    return names.cluster_ca_cert(endpoint.cluster) if listener and listener.tls else None


def _ca_dir(side: str) -> str:
    return f"{MIRROR_CA_DIR}/{side}"


def _user_dir(side: str) -> str:
    return f"{MIRROR_USERS_DIR}/{side}"


def _security(side: str, endpoint: Endpoint, cluster: ClusterSpec | None) -> dict[str, str]:
    """Client settings for the endpoint's listener: its protocol, the Cluster's CA with TLS,
    and the User's credential read from its mounted Secret (never written out here)."""
    listener = listener_of(cluster, endpoint.listener) if cluster is not None else None
    if listener is None:
        return {}
    settings: dict[str, str] = {}
    if listener.security_protocol != "PLAINTEXT":
        settings["security.protocol"] = listener.security_protocol
    if _trusted_ca(endpoint, cluster):
        settings["ssl.ca.location"] = f"{_ca_dir(side)}/{CA_CERT_KEY}"
    authentication = listener.authentication
    if endpoint.user is None or authentication is None:
        return settings
    if authentication.type == "tls":
        settings["ssl.certificate.location"] = f"{_user_dir(side)}/{USER_CERT_KEY}"
        settings["ssl.key.location"] = f"{_user_dir(side)}/{USER_KEY_KEY}"
    elif authentication.sasl_mechanism is not None:
        settings["sasl.mechanism"] = authentication.sasl_mechanism
        for setting, key in (("sasl.username", USERNAME_KEY), ("sasl.password", PASSWORD_KEY)):
            settings[setting] = f"${{directory:{_user_dir(side)}:{key}}}"
    return settings


def mirror_config(
    owner: Owner, spec: MirrorMakerSpec, clusters: Mapping[str, ClusterSpec] | None = None
) -> str:
    """The file `odradek mirror --config` reads: the spec with endpoints resolved."""
    clusters = clusters or {}
    document: dict[str, Any] = spec.wire()
    for side in SIDES:
        endpoint: Endpoint = getattr(spec, side)
        cluster = clusters.get(endpoint.cluster or "")
        document[side] = {
            "alias": endpoint.alias,
            "bootstrapServers": bootstrap_for(endpoint, owner.namespace, cluster),
            "config": {**_security(side, endpoint, cluster), **endpoint.config},
        }
    for key in ("image", "replicas", "resources"):
        document.pop(key, None)
    document["name"] = owner.name
    return yaml.safe_dump(document, sort_keys=True)


def _mounted_secrets(
    spec: MirrorMakerSpec, clusters: Mapping[str, ClusterSpec]
) -> list[tuple[str, str, str]]:
    """(volume, Secret, mount path) of each side's trusted CA and User."""
    mounted = []
    for side in SIDES:
        endpoint: Endpoint = getattr(spec, side)
        trusted = _trusted_ca(endpoint, clusters.get(endpoint.cluster or ""))
        if trusted is not None:
            mounted.append((f"{side}-ca", trusted, _ca_dir(side)))
        if endpoint.user is not None:
            mounted.append((f"{side}-user", endpoint.user, _user_dir(side)))
    return mounted


def mirror_objects(
    owner: Owner, spec: MirrorMakerSpec, clusters: Mapping[str, ClusterSpec] | None = None
) -> list[Obj]:
    """The mirror's objects; ``clusters``: the specs of the Clusters its endpoints name."""
    clusters = clusters or {}
    config = mirror_config(owner, spec, clusters)
    name = names.mirror(owner.name)
    mounted = _mounted_secrets(spec, clusters)
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
            *({"name": volume, "mountPath": path, "readOnly": True} for volume, _, path in mounted),
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
                        *(
                            {"name": volume, "secret": {"secretName": secret}}
                            for volume, secret, _ in mounted
                        ),
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
