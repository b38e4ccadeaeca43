"""Names, ports and defaults of the operator, in one place."""

from __future__ import annotations

GROUP = "odradek.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
CATEGORY = "odradek"

DEFAULT_IMAGE = "ghcr.io/odradek/odradek:0.1.0"
DEFAULT_ETCD_IMAGE = "quay.io/coreos/etcd:v3.5.17"
FIELD_MANAGER = "odradek-operator"

KAFKA_PORT = 9092
HTTP_PORT = 9080
REPLICATION_LISTENER = "REPLICATION"
REPLICATION_PORT = 9091
"""With TLS, brokers replicate (and the operator administers) over this listener: TLS with
the cluster CA's certificates on both sides."""
ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
ETCD_METRICS_PORT = 2381
"""Plain HTTP /health and /metrics of a TLS etcd member, for the kubelet's probes."""

BROKER_CONFIG_DIR = "/etc/odradek"
BROKER_CONFIG_FILE = "broker.properties"
BROKER_RUNTIME_DIR = "/var/run/odradek"
BROKER_DATA_DIR = "/var/lib/odradek"
BROKER_CERTS_DIR = "/etc/odradek/certs"
CA_CERT_KEY = "ca.crt"
"""The CA certificate's key in the certificate Secrets, as in Kubernetes' TLS Secrets."""
CLIENTS_CA_CERT_KEY = "clients-ca.crt"
"""The clients CA certificates in the brokers' certificate Secret: what a listener with
tls authentication trusts."""
CLUSTER_PRINCIPAL = "User:CN=odradek-cluster"
"""The principal of the brokers and the operator on the replication listener: a super user
(no User resource can be named so)."""
MIRROR_CONFIG_FILE = "mirror.yaml"

DEFAULT_ZONE_LABEL = "topology.kubernetes.io/zone"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
CONFIG_HASH_ANNOTATION = f"{GROUP}/config-hash"
FINALIZER = f"{GROUP}/topic"
"""What Topics and Users carry until their deletion is applied to the cluster (named when
only Topics had one: existing Topics keep it)."""
ADMIN_BOOTSTRAP_ANNOTATION = f"{GROUP}/admin-bootstrap-servers"
"""On a Cluster: where an operator running outside Kubernetes reaches its brokers."""
OUT_OF_CLUSTER_ENV = "ODRADEK_OPERATOR_OUT_OF_CLUSTER"
"""Set to 1 when the operator cannot resolve Service DNS names; only then is the
admin-bootstrap-servers annotation honoured (tests, development against a remote cluster)."""

MIN_INSYNC_REPLICAS = "min.insync.replicas"
DEFAULT_REPLICATION_FACTOR = "default.replication.factor"

OPERATOR_MANAGED_KEYS = (
    "node.id",
    "listeners",
    "advertised.listeners",
    "log.dirs",
    "broker.rack",
    "http.listener",
    "etcd.endpoints",
    "cluster.name",
    "listener.security.protocol.map",
    "inter.broker.listener.name",
    "authorizer.class.name",
    "super.users",
)
"""Broker settings the operator sets per pod or per cluster; spec.config may not set them."""
