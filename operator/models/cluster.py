"""The Cluster custom resource: a set of brokers and their coordination store."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from ..constants import (
    DEFAULT_IMAGE,
    DEFAULT_ZONE_LABEL,
    HTTP_PORT,
    KAFKA_PORT,
    OPERATOR_MANAGED_KEYS,
    REPLICATION_LISTENER,
    REPLICATION_PORT,
)
from .base import Schema
from .common import (
    Conditions,
    DnsLabel,
    KafkaConfig,
    KubeObject,
    KubeObjectList,
    Quantity,
    Resources,
)


class Storage(Schema):
    """Where a broker keeps its log."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.type == 'persistent-claim' || !has(self.storageClassName)",
                    "message": "storageClassName applies only to persistent-claim storage",
                }
            ]
        }
    )

    type: Literal["persistent-claim", "ephemeral"] = "persistent-claim"
    """persistent-claim: one PersistentVolumeClaim per broker; ephemeral: an emptyDir."""
    size: Quantity = "10Gi"
    storage_class_name: str | None = None
    delete_claim: bool = False
    """Delete the claims when the Cluster is deleted or scaled down."""


class Rack(Schema):
    """Rack awareness: each broker's broker.rack is its node's value of this label."""

    topology_key: Annotated[str, Field(min_length=1, max_length=316)] = DEFAULT_ZONE_LABEL


class ManagedEtcd(Schema):
    """An etcd StatefulSet run by the operator next to the brokers."""

    replicas: Literal[1, 3, 5] = 3
    image: str | None = None
    storage: Storage = Storage(size="1Gi")
    resources: Resources | None = None


EtcdUrl = Annotated[str, Field(pattern=r"^https?://", max_length=253)]


class ExternalEtcd(Schema):
    """An etcd cluster run elsewhere."""

    endpoints: Annotated[list[EtcdUrl], Field(min_length=1, max_length=16)]


class Coordination(Schema):
    """The etcd store brokers coordinate through: managed by the operator or external."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.managed) != has(self.external)",
                    "message": "set exactly one of coordination.managed and coordination.external",
                }
            ]
        }
    )

    managed: ManagedEtcd | None = None
    external: ExternalEtcd | None = None


class ListenerAuthentication(Schema):
    """Who may connect to a listener: Users of the Cluster with that kind of credential, or
    holders of a token from an OAuth issuer."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "(self.type == 'oauth') == has(self.jwksEndpointUri)",
                    "message": "jwksEndpointUri is required for, and only for, type oauth",
                },
                {
                    "rule": "self.type == 'oauth' || !has(self.validIssuerUri)"
                    " && !has(self.audience) && !has(self.userNameClaim)",
                    "message": "validIssuerUri, audience and userNameClaim apply only to type"
                    " oauth",
                },
            ]
        }
    )

    type: Literal["scram-sha-512", "scram-sha-256", "plain", "tls", "oauth"]
    """scram-sha-512 / scram-sha-256: SASL SCRAM with a User's password; plain: SASL PLAIN
    with a SCRAM User's password, checked against its SCRAM credential (sent as it is:
    give the listener tls: true); tls: a client
    certificate issued by the clients CA (needs tls: true); oauth: SASL OAUTHBEARER with a
    JWT the issuer signed, the principal named by its userNameClaim."""
    jwks_endpoint_uri: Annotated[str, Field(pattern=r"^(https?|file)://", max_length=2048)] | (
        None
    ) = None
    """oauth: where the issuer's signing keys (a JWKS) are; https in production."""
    valid_issuer_uri: Annotated[str, Field(min_length=1, max_length=2048)] | None = None
    """oauth: the iss every token must carry."""
    audience: Annotated[list[Annotated[str, Field(min_length=1)]], Field(max_length=16)] | (
        None
    ) = None
    """oauth: a token's aud must name one of these."""
    user_name_claim: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    """oauth: the claim that names the principal (default sub)."""

    @property
    def sasl_mechanism(self) -> str | None:
        if self.type == "tls":
            return None
        return "OAUTHBEARER" if self.type == "oauth" else self.type.upper()


class ExternalAccess(Schema):
    """How clients outside the Kubernetes cluster reach each broker of a listener."""

    type: Literal["nodeport", "loadbalancer"] = "nodeport"
    """nodeport: a NodePort Service per broker (its node port allocated by the API server);
    the broker advertises its node's address (the pod's status.hostIP) and that port.
    loadbalancer: a LoadBalancer Service per broker; the broker advertises the address the
    load balancer was given (the Service's status) and the listener's port, and waits
    for it when it starts before the address is known."""


class Listener(Schema):
    """A Kafka listener every broker opens."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.authentication) || self.authentication.type != 'tls'"
                    " || self.tls",
                    "message": "authentication type tls needs tls: true",
                },
                {
                    "rule": f"self.name != '{REPLICATION_LISTENER}'",
                    "message": f"{REPLICATION_LISTENER} is the operator's own listener",
                },
                {
                    "rule": f"self.port != {REPLICATION_PORT} && self.port != {HTTP_PORT}",
                    "message": f"ports {REPLICATION_PORT} and {HTTP_PORT} are the operator's own",
                },
            ]
        }
    )

    name: Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=32)] = "PLAINTEXT"
    port: Annotated[int, Field(ge=1024, le=65535)] = KAFKA_PORT
    tls: bool = False
    """Serve TLS with a certificate the cluster CA issues each broker."""
    authentication: ListenerAuthentication | None = None
    """How clients prove who they are; none: every client is User:ANONYMOUS."""
    external: ExternalAccess | None = None
    """Reach the listener from outside the Kubernetes cluster; omit for in-cluster only (the
    brokers' names under the headless Service)."""

    @property
    def security_protocol(self) -> str:
        """Kafka's name for what the listener speaks."""
        sasl = self.authentication is not None and self.authentication.sasl_mechanism is not None
        if sasl:
            return "SASL_SSL" if self.tls else "SASL_PLAINTEXT"
        return "SSL" if self.tls else "PLAINTEXT"


class CertificateAuthority(Schema):
    """The CA the operator keeps for a Cluster's TLS, and the certificates it issues."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "2 * self.renewalDays <= self.validityDays",
                    "message": "renewalDays must be at most half of validityDays",
                }
            ]
        }
    )

    generate_certificate_authority: bool = True
    """false: bring your own CA, in the Secret <cluster>-cluster-ca (or -clients-ca) with
    ca.key and ca.crt (PEM; previous-ca.key and previous-ca.crt too while an old one must
    stay trusted); the operator issues certificates from it and never replaces it."""
    validity_days: Annotated[int, Field(ge=2, le=3650)] = 365
    """How long the CA and each certificate it issues are valid."""
    renewal_days: Annotated[int, Field(ge=1, le=1825)] = 30
    """A certificate is renewed this long before it expires (at most half the validity:
    a new CA is not due before the one it replaces has expired)."""


class Authorization(Schema):
    """Kafka's ACLs: each User's rules, checked by every broker."""

    type: Literal["simple"] = "simple"
    """simple: Kafka's built-in authorizer; a principal with no ACL allowing it is denied."""
    super_users: Annotated[
        list[Annotated[str, Field(pattern=r"^[A-Za-z]+:.+$", max_length=256)]],
        Field(max_length=64),
    ] = []
    """Principals allowed everything, e.g. User:admin (the brokers and the operator are)."""


class Metrics(Schema):
    """Prometheus integration."""

    service_monitor: bool = False
    """Create a ServiceMonitor (needs the Prometheus operator's CRDs)."""
    prometheus_rule: bool = False
    """Create a PrometheusRule with the broker alerts."""


class PodTemplate(Schema):
    """Overrides applied to the broker pods."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    node_selector: dict[str, str] | None = None
    affinity: KubeObject | None = None
    tolerations: KubeObjectList | None = None
    topology_spread_constraints: KubeObjectList | None = None
    priority_class_name: str | None = None
    security_context: KubeObject | None = None
    """The pod's securityContext."""
    container_security_context: KubeObject | None = None
    """The broker container's securityContext."""


class Failover(Schema):
    """Replacement of brokers stuck on a lost node or a lost volume."""

    enabled: bool = True
    grace_period_seconds: Annotated[int, Field(ge=30)] = 300


_MAX_RF_RULE = (
    "!has(self.config) || !('{key}' in self.config) || int(self.config['{key}']) <= self.replicas"
)


_SECURED = "{s}.listeners.exists(l, l.tls || has(l.authentication)) || has({s}.authorization)"

_MANAGED = "[" + ", ".join(f"'{key}'" for key in OPERATOR_MANAGED_KEYS) + "]"


class ClusterSpec(Schema):
    """Desired state of an Odradek cluster."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": _MAX_RF_RULE.format(key="default.replication.factor"),
                    "message": "config default.replication.factor cannot exceed replicas",
                },
                {
                    "rule": _MAX_RF_RULE.format(key="min.insync.replicas"),
                    "message": "config min.insync.replicas cannot exceed replicas",
                },
                {
                    "rule": f"({_SECURED.format(s='self')}) == ({_SECURED.format(s='oldSelf')})",
                    "message": "TLS, authentication and authorization cannot be turned on or off"
                    " in a running Cluster (its brokers would stop replicating to each other"
                    " while they roll); create a new Cluster",
                },
                {
                    "rule": f"!has(self.config) || !self.config.exists(k, k in {_MANAGED})",
                    "message": f"config cannot set {', '.join(OPERATOR_MANAGED_KEYS)}:"
                    " the operator sets them",
                },
            ]
        }
    )

    replicas: Annotated[int, Field(ge=1, le=1000)] = 3
    """Number of brokers."""
    image: Annotated[str, Field(min_length=1)] = DEFAULT_IMAGE
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    resources: Resources | None = None
    storage: Storage = Storage()
    rack: Rack | None = None
    """Spread replicas across racks; omit to run without broker.rack."""
    config: KafkaConfig = {}
    coordination: Coordination = Coordination(managed=ManagedEtcd())
    listeners: Annotated[
        list[Listener],
        Field(
            min_length=1,
            max_length=4,
            json_schema_extra={
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(a, self.exists_one(b, b.name == a.name))",
                        "message": "listener names must be unique",
                    },
                    {
                        "rule": "self.all(a, self.exists_one(b, b.port == a.port))",
                        "message": "listener ports must be unique",
                    },
                ]
            },
        ),
    ] = [Listener()]
    authorization: Authorization | None = None
    """Enforce ACLs (each User's); omit to allow every client everything."""
    cluster_ca: CertificateAuthority = CertificateAuthority()
    """In a secured Cluster: the cluster CA and the brokers' certificates."""
    clients_ca: CertificateAuthority = CertificateAuthority()
    """In a secured Cluster: the CA that issues Users' client certificates."""
    metrics: Metrics = Metrics()
    template: PodTemplate | None = None
    rebalance_on_scale: bool = False
    """Move partitions onto new brokers when scaling up."""
    failover: Failover = Failover()

    @property
    def external_listeners(self) -> list[Listener]:
        return [listener for listener in self.listeners if listener.external is not None]

    @property
    def secured(self) -> bool:
        """Some listener serves TLS or authenticates, or ACLs are enforced: the cluster has
        CAs, and brokers replicate over TLS with the cluster CA's certificates."""
        return self.authorization is not None or any(
            listener.tls or listener.authentication is not None for listener in self.listeners
        )


class BrokerStatus(Schema):
    """One broker as the operator last saw it."""

    id: int
    pod: DnsLabel
    rack: str | None = None
    ready: bool = False


class ClusterStatus(Conditions):
    """Observed state of an Odradek cluster."""

    bootstrap_servers: str | None = None
    replicas: int = 0
    """Brokers that exist (the scale subresource's status replicas)."""
    selector: str | None = None
    """Label selector of the broker pods (for the scale subresource)."""
    brokers: list[BrokerStatus] = []
    controller: int | None = None
    under_replicated_partitions: int | None = None
    replaced_brokers: Annotated[list[str], Field(max_length=32)] = []
    """Brokers whose pod and volume were replaced after a node or volume loss, with when."""
