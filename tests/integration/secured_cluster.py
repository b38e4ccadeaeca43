"""A cluster secured end to end (issue 16): each broker's only listeners are INTERNAL
(SASL_SSL, the inter-broker listener, SCRAM-SHA-512, PLAIN or OAUTHBEARER with a token
file the brokers share, as Kafka configures it) and CLIENTS (SSL with
required client certificates: mutual TLS), and etcd serves over TLS requiring client
certificates, which the brokers show. One test CA signs everything: each broker's
certificate (its key store, reread when replaced), etcd's, and the client certificate
the harness's own clients (Metadata, admin, producers, consumers) connect with.

``Broker.bootstrap`` is the CLIENTS listener, so the harness and the fault test run
unchanged once they use ``Cluster.client_config`` and ``Cluster.wire_tls``.
"""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from broker_process import Broker, free_port
from certificates import certificate_authority, issue
from cluster_harness import Cluster, ClusterFactory, cluster_pool, running_etcd
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from oauth_tokens import ISSUER, RSA_KEY, claims, jwks, public_jwk, signed

from odradek.cli.etcd_process import EtcdTls

BROKER_USER = "broker"
BROKER_PASSWORD = "broker-inter-secret"
REAUTH_MS = 3000
"""connections.max.reauth.ms of the INTERNAL listener: replica fetchers log in again
every few seconds, under load and faults."""
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_OAUTHBEARER = "org.apache.kafka.common.security.oauthbearer."


class SecuredCluster:
    """A ``ClusterSecurity``: certificates under ``directory``, ``mechanism`` between
    brokers."""

    def __init__(self, directory: Path, mechanism: str = "SCRAM-SHA-512") -> None:
        self.directory = directory
        self.mechanism = mechanism
        directory.mkdir(parents=True, exist_ok=True)
        self.ca = certificate_authority()
        self.ca_file.write_bytes(self.ca.cert_pem)
        self.client_cert, self.client_key = self._pair("admin-client")
        if mechanism == "OAUTHBEARER":
            (directory / "jwks.json").write_bytes(jwks(public_jwk(RSA_KEY, "key-1")))
            self.write_token()

    @property
    def token_file(self) -> Path:
        """OAUTHBEARER: the token every broker logs in to the others with."""
        return self.directory / "broker-token.jwt"

    def write_token(self, key: Any = RSA_KEY) -> None:
        """A token for the broker user, valid for an hour, signed with ``key``, written over
        the token file as a rotation would (a new file renamed into place)."""
        now = time.time()
        payload = claims(sub=BROKER_USER, iat=now - 5, exp=now + 3600)
        fresh = self.token_file.with_suffix(".new")
        fresh.write_text(signed(payload, key))
        fresh.replace(self.token_file)

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.pem"

    def key_store(self, node_id: int) -> Path:
        return self.directory / f"broker-{node_id}.pem"

    def replace_key_store(self, node_id: int) -> int:
        """A new certificate for broker ``node_id``, written over its key store as a
        rotation would (a new file renamed into place); returns its serial number."""
        issued = issue(self.ca, f"broker-{node_id}")
        fresh = self.key_store(node_id).with_suffix(".new")
        issued.write_pem(fresh)
        fresh.replace(self.key_store(node_id))
        return issued.certificate.serial_number

    @property
    def jaas_key(self) -> str:
        return f"listener.name.internal.{self.mechanism.lower()}.sasl.jaas.config"

    def jaas(self, password: str = BROKER_PASSWORD) -> str:
        """The broker's login; with PLAIN also the users it accepts (the broker user)."""
        if self.mechanism == "OAUTHBEARER":
            return f"{_OAUTHBEARER}OAuthBearerLoginModule required;"
        users = f' user_{BROKER_USER}="{BROKER_PASSWORD}"' if self.mechanism == "PLAIN" else ""
        return (
            f"{_LOGIN_MODULES[self.mechanism]} required"
            f' username="{BROKER_USER}" password="{password}"{users};'
        )

    def etcd_tls(self) -> EtcdTls:
        cert, key = self._pair("etcd")
        return EtcdTls(cert, key, self.ca_file, self.client_cert, self.client_key)

    # -- ClusterSecurity ----------------------------------------------------------------------

    def broker_settings(self, node_id: int, broker: Broker) -> dict[str, str]:
        issue(self.ca, f"broker-{node_id}").write_pem(self.key_store(node_id))
        return {
            "listeners": f"INTERNAL://127.0.0.1:{free_port()},CLIENTS://{broker.bootstrap}",
            "listener.security.protocol.map": "INTERNAL:SASL_SSL,CLIENTS:SSL",
            "inter.broker.listener.name": "INTERNAL",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.key_store(node_id)),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.ca_file),
            "ssl.reload.check.interval.ms": "200",
            "listener.name.clients.ssl.client.auth": "required",
            "listener.name.internal.sasl.enabled.mechanisms": self.mechanism,
            "listener.name.internal.connections.max.reauth.ms": str(REAUTH_MS),
            "sasl.mechanism.inter.broker.protocol": self.mechanism,
            self.jaas_key: self.jaas(),
            "etcd.ssl.truststore.location": str(self.ca_file),
            "etcd.ssl.keystore.location": str(self.key_store(node_id)),
            **(self._oauthbearer_settings() if self.mechanism == "OAUTHBEARER" else {}),
        }

    def _oauthbearer_settings(self) -> dict[str, str]:
        """Kafka's settings for OAUTHBEARER between brokers: tokens checked against the
        JWKS, and each broker's own token read from a file."""
        mechanism = "listener.name.internal.oauthbearer."
        return {
            "listener.name.internal.sasl.oauthbearer.jwks.endpoint.url": (
                (self.directory / "jwks.json").as_uri()
            ),
            "listener.name.internal.sasl.oauthbearer.expected.issuer": ISSUER,
            f"{mechanism}sasl.oauthbearer.token.endpoint.url": self.token_file.as_uri(),
            f"{mechanism}sasl.login.callback.handler.class": (
                f"{_OAUTHBEARER}OAuthBearerLoginCallbackHandler"
            ),
            f"{mechanism}sasl.server.callback.handler.class": (
                f"{_OAUTHBEARER}OAuthBearerValidatorCallbackHandler"
            ),
        }

    def client_config(self) -> dict[str, str]:
        return {
            "security.protocol": "SSL",
            "ssl.ca.location": str(self.ca_file),
            "ssl.certificate.location": str(self.client_cert),
            "ssl.key.location": str(self.client_key),
        }

    def wire_tls(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        context.load_cert_chain(self.client_cert, self.client_key)
        return context

    def prepare(self, cluster: Cluster) -> None:
        """SCRAM: the brokers' credential, set through a client as an operator would
        (``kafka-configs --alter --add-config SCRAM-SHA-512=[...]``)."""
        if not self.mechanism.startswith("SCRAM"):
            return
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap, **self.client_config()})
        mechanism = ScramMechanism[self.mechanism.replace("-", "_")]
        upsert = UserScramCredentialUpsertion(
            BROKER_USER, ScramCredentialInfo(mechanism, 4096), BROKER_PASSWORD.encode()
        )
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=30)

    def _pair(self, name: str) -> tuple[Path, Path]:
        issued = issue(self.ca, name)
        cert, key = self.directory / f"{name}.crt", self.directory / f"{name}.key"
        cert.write_bytes(issued.cert_pem)
        key.write_bytes(issued.key_pem)
        return cert, key


@contextlib.contextmanager
def secured_cluster_pool(
    workdir: Path, mechanism: str = "SCRAM-SHA-512"
) -> Iterator[tuple[ClusterFactory, SecuredCluster]]:
    """A TLS etcd requiring client certificates, and secured clusters on it."""
    security = SecuredCluster(workdir / "certificates", mechanism)
    with (
        running_etcd(workdir, security.etcd_tls()) as etcd,
        cluster_pool(workdir / "clusters", etcd, security) as make,
    ):
        yield make, security
