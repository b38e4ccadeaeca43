"""The broker StatefulSet: id = ordinal, DNS name advertised, restarts left to the operator."""

from __future__ import annotations

from ..constants import (
    BROKER_CERTS_DIR,
    BROKER_CONFIG_DIR,
    BROKER_CONFIG_FILE,
    BROKER_DATA_DIR,
    BROKER_RUNTIME_DIR,
    CONFIG_HASH_ANNOTATION,
    HTTP_PORT,
    POD_INDEX_LABEL,
)
from ..models import ClusterSpec
from ..models.cluster import Storage
from . import names
from .broker_config import listeners
from .meta import Obj, Owner, labels, metadata, selector_labels
from .pod_defaults import CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT, field_env

TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
EXTERNAL_PORTS_DIR = "/etc/odradek/external-ports"
EXTERNAL_ADDRESS_WAIT_S = 600
"""How long a starting broker waits for a load balancer's address before it fails."""
TERMINATION_GRACE_SECONDS = 120
"""Time for a controlled shutdown: the broker hands its leaderships over before it exits."""


def broker_statefulset(owner: Owner, spec: ClusterSpec, config_hash: str) -> Obj:
    template = spec.template
    pod_labels = {**(template.labels or {} if template else {}), **labels(owner, "broker")}
    annotations = {
        **(template.annotations or {} if template else {}),
        CONFIG_HASH_ANNOTATION: config_hash,
    }
    sts_spec: Obj = {
        "replicas": spec.replicas,
        "serviceName": names.headless(owner.name),
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "OnDelete"},
        "selector": {"matchLabels": selector_labels(owner, "broker")},
        "persistentVolumeClaimRetentionPolicy": _retention(spec.storage),
        "template": {
            "metadata": {"labels": pod_labels, "annotations": annotations},
            "spec": _pod_spec(owner, spec),
        },
    }
    if spec.storage.type == "persistent-claim":
        sts_spec["volumeClaimTemplates"] = [volume_claim(spec.storage)]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(owner, names.brokers(owner.name), "broker"),
        "spec": sts_spec,
    }


def volume_claim(storage: Storage) -> Obj:
    claim: Obj = {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage.size}},
        },
    }
    if storage.storage_class_name:
        claim["spec"]["storageClassName"] = storage.storage_class_name
    return claim


def _retention(storage: Storage) -> Obj:
    policy = "Delete" if storage.delete_claim else "Retain"
    return {"whenDeleted": policy, "whenScaled": policy}


def _pod_spec(owner: Owner, spec: ClusterSpec) -> Obj:
    template = spec.template
    pod: Obj = {
        "serviceAccountName": names.service_account(owner.name),
        "automountServiceAccountToken": False,
        "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
        "securityContext": (template.security_context if template else None)
        or POD_SECURITY_CONTEXT,
        "containers": [_broker_container(owner, spec)],
        "volumes": _volumes(owner, spec),
    }
    if _has_startup_step(spec):
        pod["initContainers"] = [_startup_container(owner, spec)]
    pod["topologySpreadConstraints"] = default_spread(owner, spec)
    if template is not None:
        optional = {
            "affinity": template.affinity,
            "tolerations": template.tolerations,
            "topologySpreadConstraints": template.topology_spread_constraints,
            "priorityClassName": template.priority_class_name,
            "nodeSelector": template.node_selector,
        }
        pod.update({k: v for k, v in optional.items() if v is not None})
    return pod


def default_spread(owner: Owner, spec: ClusterSpec) -> list[Obj]:
    """Brokers spread over nodes, and over racks when rack awareness is on.

    ScheduleAnyway: a cluster with fewer zones or nodes than brokers still runs. Tainted
    nodes (a lost node is tainted unreachable) do not count, so a broker rebuilt after
    its zone was lost is not held to that zone's missing brokers.
    """
    keys = ["kubernetes.io/hostname"]
    if spec.rack is not None:
        keys.insert(0, spec.rack.topology_key)
    return [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "nodeTaintsPolicy": "Honor",
            "labelSelector": {"matchLabels": selector_labels(owner, "broker")},
        }
        for key in keys
    ]


def _has_startup_step(spec: ClusterSpec) -> bool:
    """With racks or external listeners, an init step completes the broker's config with
    what only the pod's node tells: its zone, its address."""
    return spec.rack is not None or bool(spec.external_listeners)


def _config_path(spec: ClusterSpec) -> str:
    """The file the broker reads: the init step's, in the runtime dir, when there is one."""
    directory = BROKER_RUNTIME_DIR if _has_startup_step(spec) else BROKER_CONFIG_DIR
    return f"{directory}/{BROKER_CONFIG_FILE}"


def _advertised(owner: Owner, spec: ClusterSpec) -> str:
    """The in-cluster advertised listeners: each at the pod's name under the headless
    Service (``$(POD_NAME)`` and ``$(POD_NAMESPACE)`` filled in by the kubelet)."""
    dns = f"$(POD_NAME).{names.headless(owner.name)}.$(POD_NAMESPACE).svc"
    external = {listener.name for listener in spec.external_listeners}
    return ",".join(
        f"{name}://{dns}:{port}" for name, port in listeners(spec) if name not in external
    )


def _broker_container(owner: Owner, spec: ClusterSpec) -> Obj:
    opened = listeners(spec)
    template = spec.template
    # with external listeners the init step writes advertised.listeners (it alone knows
    # the node's address); else the environment sets them
    advertised = (
        []
        if spec.external_listeners
        else [{"name": "ODRADEK_ADVERTISED_LISTENERS", "value": _advertised(owner, spec)}]
    )
    container: Obj = {
        "name": "broker",
        "image": spec.image,
        "args": ["broker", "--config", _config_path(spec)],
        "env": [
            field_env("POD_NAME", "metadata.name"),
            field_env("POD_NAMESPACE", "metadata.namespace"),
            field_env("ODRADEK_NODE_ID", f"metadata.labels['{POD_INDEX_LABEL}']"),
            *advertised,
            *(_keystore_env(spec) if spec.secured else []),
        ],
        "ports": [
            *({"name": f"kafka-{i}", "containerPort": port} for i, (_, port) in enumerate(opened)),
            {"name": "http", "containerPort": HTTP_PORT},
        ],
        "startupProbe": _probe("/healthz", period=5, failures=120),
        "livenessProbe": _probe("/healthz", period=10, failures=3),
        "readinessProbe": _probe("/readyz", period=5, failures=2),
        "securityContext": (template.container_security_context if template else None)
        or CONTAINER_SECURITY_CONTEXT,
        "volumeMounts": [
            {"name": "data", "mountPath": BROKER_DATA_DIR},
            {"name": "config", "mountPath": BROKER_CONFIG_DIR, "readOnly": True},
            {"name": "runtime", "mountPath": BROKER_RUNTIME_DIR},
            {"name": "tmp", "mountPath": "/tmp"},
            *(
                [{"name": "certs", "mountPath": BROKER_CERTS_DIR, "readOnly": True}]
                if spec.secured
                else []
            ),
        ],
    }
    if spec.image_pull_policy:
        container["imagePullPolicy"] = spec.image_pull_policy
    if spec.resources is not None:
        container["resources"] = spec.resources.wire()
    return container


def _startup_container(owner: Owner, spec: ClusterSpec) -> Obj:
    """Completes the config: broker.rack from the node's zone label (read with the API
    token), and with external listeners advertised.listeners with the node's address and
    the broker's node ports, or its load balancers' addresses (waited for)."""
    command = [
        "python3",
        "-m",
        "odradek.operator.pod_init",
        "--config",
        f"{BROKER_CONFIG_DIR}/{BROKER_CONFIG_FILE}",
        "--out",
        _config_path(spec),
    ]
    env = [field_env("NODE_NAME", "spec.nodeName")]
    mounts = [
        {"name": "config", "mountPath": BROKER_CONFIG_DIR, "readOnly": True},
        {"name": "runtime", "mountPath": BROKER_RUNTIME_DIR},
    ]
    if spec.rack is not None:
        command += ["--node", "$(NODE_NAME)", "--topology-key", spec.rack.topology_key]
        mounts.append({"name": "token", "mountPath": TOKEN_DIR, "readOnly": True})
    if spec.external_listeners:
        command += ["--advertised", _advertised(owner, spec), "--host", "$(HOST_IP)"]
        command += ["--broker", "$(BROKER_ID)", "--external-ports", EXTERNAL_PORTS_DIR]
        command += ["--wait", str(EXTERNAL_ADDRESS_WAIT_S)]
        for listener in spec.external_listeners:
            command += ["--external", listener.name]
        env += [
            field_env("POD_NAME", "metadata.name"),
            field_env("POD_NAMESPACE", "metadata.namespace"),
            field_env("HOST_IP", "status.hostIP"),
            field_env("BROKER_ID", f"metadata.labels['{POD_INDEX_LABEL}']"),
        ]
        mounts.append({"name": "external-ports", "mountPath": EXTERNAL_PORTS_DIR})
    return {
        "name": "startup",
        "image": spec.image,
        "command": command,
        "env": env,
        "securityContext": CONTAINER_SECURITY_CONTEXT,
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        "volumeMounts": mounts,
    }


def _volumes(owner: Owner, spec: ClusterSpec) -> list[Obj]:
    volumes: list[Obj] = [
        {"name": "config", "configMap": {"name": names.config(owner.name)}},
        {"name": "runtime", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}},
    ]
    if spec.storage.type == "ephemeral":
        volumes.append({"name": "data", "emptyDir": {"sizeLimit": spec.storage.size}})
    if spec.rack is not None:
        volumes.append(_token_volume())
    if spec.external_listeners:
        ports = {"name": names.external_ports(owner.name)}
        volumes.append({"name": "external-ports", "configMap": ports})
    if spec.secured:
        # updated in place when certificates are renewed; brokers reload them by themselves
        # readable by the broker's group (fsGroup) alone: it holds every broker's key
        secret = {"secretName": names.broker_certs(owner.name), "defaultMode": 0o440}
        volumes.append({"name": "certs", "secret": secret})
    return volumes


def _keystore_env(spec: ClusterSpec) -> list[Obj]:
    """This broker's own key and certificate among every broker's in the certificate Secret:
    for its listeners, and for etcd when the operator runs it (over TLS)."""
    keystore = f"{BROKER_CERTS_DIR}/$(POD_NAME).pem"
    variables = ["ODRADEK_SSL_KEYSTORE_LOCATION"]
    if spec.coordination.managed is not None:
        variables.append("ODRADEK_ETCD_SSL_KEYSTORE_LOCATION")
    return [{"name": name, "value": keystore} for name in variables]


def _token_volume() -> Obj:
    """The API token, mounted in the rack init step only: the broker itself gets none."""
    return {
        "name": "token",
        "projected": {
            "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}
                        ]
                    }
                },
            ]
        },
    }


def _probe(path: str, period: int, failures: int) -> Obj:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period,
        "failureThreshold": failures,
        "timeoutSeconds": 3,
    }
