"""The broker's properties file, in Kafka's names."""

from __future__ import annotations

from ..constants import (
    BROKER_CERTS_DIR,
    BROKER_DATA_DIR,
    CA_CERT_KEY,
    CLIENTS_CA_CERT_KEY,
    CLUSTER_PRINCIPAL,
    HTTP_PORT,
    OPERATOR_MANAGED_KEYS,
    REPLICATION_LISTENER,
    REPLICATION_PORT,
)
from ..models import ClusterSpec
from ..models.cluster import ListenerAuthentication
from . import names
from .certificates import ORGANIZATION

LOG_DIRS = f"{BROKER_DATA_DIR}/data"


def etcd_endpoints(cluster: str, namespace: str, spec: ClusterSpec) -> list[str]:
    coordination = spec.coordination
    if coordination.external is not None:
        return list(coordination.external.endpoints)
    assert coordination.managed is not None
    replicas = coordination.managed.replicas
    return names.etcd_endpoints(cluster, namespace, replicas, tls=spec.secured)


def listeners(spec: ClusterSpec) -> list[tuple[str, int]]:
    """Every listener a broker opens, by name and port: the spec's, and in a secured Cluster
    the operator's replication listener."""
    opened = [(listener.name, listener.port) for listener in spec.listeners]
    return [*opened, (REPLICATION_LISTENER, REPLICATION_PORT)] if spec.secured else opened


def broker_properties(cluster: str, namespace: str, spec: ClusterSpec) -> str:
    """Settings shared by every broker; per-pod ones (node.id, ...) come from the environment."""
    managed = {
        "cluster.name": cluster,
        "listeners": ",".join(f"{name}://0.0.0.0:{port}" for name, port in listeners(spec)),
        "log.dirs": LOG_DIRS,
        "http.listener": f"0.0.0.0:{HTTP_PORT}",
        "etcd.endpoints": ",".join(etcd_endpoints(cluster, namespace, spec)),
        **_protocol_map(spec),
        **(_security_properties(spec) if spec.secured else {}),
    }
    user = {k: _kafka_value(v) for k, v in spec.config.items() if k not in OPERATOR_MANAGED_KEYS}
    lines = [f"{key}={value}" for key, value in {**managed, **dict(sorted(user.items()))}.items()]
    return "\n".join(lines) + "\n"


def _kafka_value(value: str | int | bool | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _protocol_map(spec: ClusterSpec) -> dict[str, str]:
    """listener.security.protocol.map, where Kafka's default (each protocol a listener of
    its name) does not say what every listener speaks."""
    protocols = {lst.name: lst.security_protocol for lst in spec.listeners}
    if spec.secured:
        protocols[REPLICATION_LISTENER] = "SSL"
    elif all(name == protocol for name, protocol in protocols.items()):
        return {}
    return {"listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items())}


def _security_properties(spec: ClusterSpec) -> dict[str, str]:
    """Each listener's authentication, with each broker's certificate (its file named per
    pod in the StatefulSet's environment); replication over TLS with client certificates,
    so only holders of a cluster CA certificate (brokers, the operator) get in, all as one
    super user; etcd over TLS when the operator runs it; and the authorizer."""
    properties = {
        "inter.broker.listener.name": REPLICATION_LISTENER,
        "ssl.keystore.type": "PEM",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": f"{BROKER_CERTS_DIR}/{CA_CERT_KEY}",
        **_client_certificates(REPLICATION_LISTENER, CA_CERT_KEY, _CLUSTER_PRINCIPAL_RULE),
    }
    if spec.coordination.managed is not None:  # each broker with its own certificate
        properties |= {
            "etcd.ssl.truststore.type": "PEM",
            "etcd.ssl.truststore.location": f"{BROKER_CERTS_DIR}/{CA_CERT_KEY}",
            "etcd.ssl.keystore.type": "PEM",
        }
    for listener in spec.listeners:
        authentication = listener.authentication
        if authentication is None:
            continue
        prefix = f"listener.name.{listener.name.lower()}"
        if authentication.sasl_mechanism is not None:
            properties[f"{prefix}.sasl.enabled.mechanisms"] = authentication.sasl_mechanism
            if authentication.type == "plain":  # a User's SCRAM password, sent as it is
                properties[f"{prefix}.sasl.plain.check.scram.credentials"] = "true"
            properties |= {
                f"{prefix}.sasl.oauthbearer.{key}": value
                for key, value in _oauth_settings(authentication).items()
            }
        else:
            rule = _USER_PRINCIPAL_RULE
            properties |= _client_certificates(listener.name, CLIENTS_CA_CERT_KEY, rule)
    if spec.authorization is not None:
        super_users = [CLUSTER_PRINCIPAL, *spec.authorization.super_users]
        properties["authorizer.class.name"] = AUTHORIZER
        properties["super.users"] = ";".join(super_users)
    return properties


def _oauth_settings(authentication: ListenerAuthentication) -> dict[str, str]:
    """Kafka's sasl.oauthbearer.* settings (without that prefix) of an oauth listener."""
    settings = {
        "jwks.endpoint.url": authentication.jwks_endpoint_uri,
        "expected.issuer": authentication.valid_issuer_uri,
        "expected.audience": ",".join(authentication.audience or []) or None,
        "sub.claim.name": authentication.user_name_claim,
    }
    return {key: value for key, value in settings.items() if value is not None}


AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_CLUSTER_PRINCIPAL_RULE = f"RULE:^.*$/{CLUSTER_PRINCIPAL.removeprefix('User:')}/"
"""Every cluster CA certificate (a broker's or the operator's) is the cluster's principal."""
_USER_PRINCIPAL_RULE = f"RULE:^CN=([^,]+),O={ORGANIZATION}$/$1/"
"""A clients CA certificate is its User's: CN is the User's name."""


def _client_certificates(listener: str, trusted: str, rule: str) -> dict[str, str]:
    """A listener that takes only clients with a certificate of the CAs in ``trusted``,
    named by ``rule``."""
    prefix = f"listener.name.{listener.lower()}"
    return {
        f"{prefix}.ssl.client.auth": "required",
        f"{prefix}.ssl.truststore.location": f"{BROKER_CERTS_DIR}/{trusted}",
        f"{prefix}.ssl.principal.mapping.rules": rule,
    }
