"""The operator's broker settings against the broker's own configuration loader."""

from __future__ import annotations

import datetime
import shutil
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from oauth_tokens import ISSUER, RSA_KEY, claims, jwks, public_jwk, signed

from odradek.broker.cluster.etcd_tls import etcd_tls
from odradek.broker.cluster.peer_security import inter_broker_security
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.listeners import Listener
from odradek.broker.security.distinguished_name import Subject
from odradek.broker.security.jwt_validator import InvalidToken
from odradek.broker.security.scram_credential import ScramMechanism, derive_credential
from odradek.broker.server.authorization import authorizer_from_config
from odradek.broker.server.listener_security import listener_security
from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.builders.broker_statefulset import broker_statefulset
from odradek.operator.builders.certificates import KeyPair, broker_dns_names, issue, new_ca
from odradek.operator.builders.meta import Owner
from odradek.operator.constants import BROKER_CERTS_DIR, CLUSTER_PRINCIPAL
from odradek.operator.models import ClusterSpec
from odradek.operator.pod_init import with_rack

SPEC = ClusterSpec.model_validate(
    {
        "config": {
            "num.partitions": 6,
            "default.replication.factor": 3,
            "auto.create.topics.enable": "false",
        }
    }
)
POD_ENV = {
    "ODRADEK_NODE_ID": "2",
    "ODRADEK_ADVERTISED_LISTENERS": "PLAINTEXT://events-broker-2.events-brokers.prod.svc:9092",
}


def test_the_broker_loads_what_the_operator_gives_a_pod(tmp_path: Path) -> None:
    """ConfigMap properties + broker.rack from the init step + per-pod environment."""
    path = tmp_path / "broker.properties"
    path.write_text(with_rack(broker_properties("events", "prod", SPEC), "eu-west-1a"))
    config = BrokerConfig.load(path, environ=POD_ENV)
    assert config.node_id == 2
    assert config.get("broker.rack") == "eu-west-1a"
    assert config.get("cluster.name") == "events"
    assert config.get("num.partitions") == 6
    assert config.get("auto.create.topics.enable") is False


def test_a_tls_broker_loads_its_certificate_and_replicates_with_it(tmp_path: Path) -> None:
    """A TLS Cluster's properties, the pod's environment as the StatefulSet gives it, and
    the certificate Secret as the operator fills it: the broker's own loaders take them."""
    spec = ClusterSpec.model_validate(
        {"listeners": [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]}
    )
    owner = Owner("Cluster", "events", "prod", "uid")
    now = datetime.datetime.now(datetime.UTC)
    ca = new_ca("events-cluster-ca", datetime.timedelta(days=30), now)
    pod = "events-broker-2"
    issued = issue(ca, pod, broker_dns_names("events", "prod", 2), datetime.timedelta(days=30), now)
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.crt").write_bytes(ca.cert_pem)
    (certs / f"{pod}.pem").write_bytes(issued.key_pem + issued.cert_pem)
    properties = broker_properties("events", "prod", spec).replace(BROKER_CERTS_DIR, str(certs))
    (tmp_path / "broker.properties").write_text(properties)
    [container] = broker_statefulset(owner, spec, "hash")["spec"]["template"]["spec"]["containers"]
    environment = {
        item["name"]: item["value"].replace("$(POD_NAME)", pod).replace("$(POD_NAMESPACE)", "prod")
        for item in container["env"]
        if "value" in item
    }
    for keystore in ("ODRADEK_SSL_KEYSTORE_LOCATION", "ODRADEK_ETCD_SSL_KEYSTORE_LOCATION"):
        environment[keystore] = environment[keystore].replace(BROKER_CERTS_DIR, str(certs))
    config = BrokerConfig.load(tmp_path / "broker.properties", environ=environment)

    assert [str(listener) for listener in config.advertised_listeners] == [
        f"{name}://{pod}.events-brokers.prod.svc:{port}"
        for name, port in (("PLAIN", 9092), ("TLS", 9093), ("REPLICATION", 9091))
    ]
    assert config.inter_broker_listener.name == "REPLICATION"
    peers = inter_broker_security(config)
    assert peers.ssl_context() is not None and peers.sasl_exchange() is None
    served = {
        listener.name: listener_security(config, listener, lambda *_: None, b"x")
        for listener in config.listeners
    }
    assert served["PLAIN"].tls is None
    assert served["TLS"].tls is not None
    assert served["REPLICATION"].tls is not None
    assert served["REPLICATION"].tls.context.verify_mode == ssl.CERT_REQUIRED

    # etcd (managed: over TLS): the broker presents its certificate, and checks the
    # member's against the cluster CA and the name it dials
    endpoint = "events-etcd-0.events-etcd.prod.svc"
    assert config.get("etcd.endpoints")[0] == f"https://{endpoint}:2379"  # type: ignore[index]
    etcd_client = etcd_tls(config)
    assert etcd_client is not None
    member = issue(ca, "events-etcd-0", [endpoint], datetime.timedelta(days=30), now)
    etcd_server = context_of(member, ca, server_side=True)
    subject = tls_handshake(etcd_server, etcd_client.current(), endpoint)
    assert subject is not None and ("commonName", pod) in [attr for rdn in subject for attr in rdn]
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_handshake(etcd_server, etcd_client.current(), "elsewhere.prod.svc")


SECURED = ClusterSpec.model_validate(
    {
        "listeners": [
            {
                "name": "SCRAM",
                "port": 9092,
                "tls": True,
                "authentication": {"type": "scram-sha-512"},
            },
            {"name": "MTLS", "port": 9093, "tls": True, "authentication": {"type": "tls"}},
            {"name": "PLAIN", "port": 9094},
        ],
        "authorization": {"superUsers": ["User:admin"]},
    }
)


def test_a_secured_broker_authenticates_users_and_the_cluster_as_the_operator_means(
    tmp_path: Path,
) -> None:
    """SCRAM over TLS on one listener, clients CA certificates on another, the replication
    listener's cluster CA certificates as the one super user the brokers and the operator
    share, and the authorizer with the spec's super users: handshakes made in memory with
    the broker's own contexts and principal mapping."""
    now = datetime.datetime.now(datetime.UTC)
    month = datetime.timedelta(days=30)
    cluster_ca = new_ca("events-cluster-ca", month, now)
    clients_ca = new_ca("events-clients-ca", month, now)
    pod = "events-broker-0"
    broker = issue(cluster_ca, pod, broker_dns_names("events", "prod", 0), month, now)
    operator = issue(cluster_ca, "odradek-operator", [], month, now)
    alice = issue(clients_ca, "alice", [], month, now)
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.crt").write_bytes(cluster_ca.cert_pem)
    (certs / "clients-ca.crt").write_bytes(clients_ca.cert_pem)
    (certs / f"{pod}.pem").write_bytes(broker.key_pem + broker.cert_pem)
    properties = broker_properties("events", "prod", SECURED).replace(BROKER_CERTS_DIR, str(certs))
    (tmp_path / "broker.properties").write_text(properties)
    environment = {
        "ODRADEK_NODE_ID": "0",
        "ODRADEK_SSL_KEYSTORE_LOCATION": str(certs / f"{pod}.pem"),
        "ODRADEK_ADVERTISED_LISTENERS": ",".join(
            f"{name}://{pod}.events-brokers.prod.svc:{port}"
            for name, port in (
                ("SCRAM", 9092),
                ("MTLS", 9093),
                ("PLAIN", 9094),
                ("REPLICATION", 9091),
            )
        ),
    }
    config = BrokerConfig.load(tmp_path / "broker.properties", environ=environment)
    served = {
        listener.name: listener_security(config, listener, lambda *_: None, b"x")
        for listener in config.listeners
    }
    assert [listener.security_protocol.name for listener in config.listeners] == [
        "SASL_SSL", "SSL", "PLAINTEXT", "SSL"
    ]  # fmt: skip
    scram = served["SCRAM"]
    assert scram.sasl is not None and scram.sasl.names == ("SCRAM-SHA-512",)
    assert scram.tls is not None and scram.tls.context.verify_mode == ssl.CERT_NONE

    def principal(listener: str, client: KeyPair) -> str:
        security = served[listener]
        assert security.tls is not None and security.principal_mapper is not None
        subject = handshake(security.tls.context, client, cluster_ca)
        return str(security.principal_mapper.principal(subject))

    assert principal("MTLS", alice) == "User:alice"
    assert principal("REPLICATION", broker) == CLUSTER_PRINCIPAL
    assert principal("REPLICATION", operator) == CLUSTER_PRINCIPAL
    with pytest.raises(ssl.SSLError):  # a cluster CA certificate is no User's
        principal("MTLS", operator)
    with pytest.raises(ssl.SSLError):  # nor a clients CA certificate a broker's
        principal("REPLICATION", alice)

    authorizer = authorizer_from_config(config)
    assert authorizer is not None
    assert authorizer.super_users == {CLUSTER_PRINCIPAL, "User:admin"}


def handshake(server: ssl.SSLContext, client: KeyPair, trusted: KeyPair) -> Subject | None:
    """A TLS handshake in memory; the client certificate's subject as the server saw it."""
    return tls_handshake(server, context_of(client, trusted, server_side=False), None)


def context_of(pair: KeyPair, trusted: KeyPair, server_side: bool) -> ssl.SSLContext:
    """A context presenting ``pair`` and trusting ``trusted`` (hostnames unchecked)."""
    purpose = ssl.Purpose.CLIENT_AUTH if server_side else ssl.Purpose.SERVER_AUTH
    context = ssl.create_default_context(purpose, cadata=trusted.cert_pem.decode())
    context.check_hostname = False
    if server_side:
        context.verify_mode = ssl.CERT_REQUIRED
    tmp = Path(tempfile.mkdtemp())
    try:
        (tmp / "pair.pem").write_bytes(pair.key_pem + pair.cert_pem)
        context.load_cert_chain(tmp / "pair.pem")
    finally:
        shutil.rmtree(tmp)
    return context


def tls_handshake(
    server: ssl.SSLContext, client: ssl.SSLContext, server_hostname: str | None
) -> Subject | None:
    """A TLS handshake in memory; the client certificate's subject as the server saw it."""
    pipes = [ssl.MemoryBIO() for _ in range(4)]
    server_side = server.wrap_bio(pipes[0], pipes[1], server_side=True)
    client_side = client.wrap_bio(pipes[2], pipes[3], server_hostname=server_hostname)
    for _ in range(10):
        done = 0
        for side, outgoing, incoming in (
            (client_side, pipes[3], pipes[0]),
            (server_side, pipes[1], pipes[2]),
        ):
            try:
                side.do_handshake()
                done += 1
            except ssl.SSLWantReadError:
                pass
            incoming.write(outgoing.read())
        if done == 2:
            subject: Subject | None = server_side.getpeercert().get("subject")  # type: ignore[union-attr, assignment]
            return subject
    raise AssertionError("the handshake did not finish")


def loaded_listener(
    tmp_path: Path, name: str, authentication: dict[str, Any]
) -> tuple[BrokerConfig, Listener]:
    """The broker config the operator writes for a Cluster with one listener ``name`` of
    that authentication, as a broker pod loads it, and that listener."""
    spec = ClusterSpec.model_validate(
        {"listeners": [{"name": name, "port": 9092, "authentication": authentication}]}
    )
    (tmp_path / "broker.properties").write_text(broker_properties("events", "prod", spec))
    advertised = f"{name}://b.prod.svc:9092,REPLICATION://b.prod.svc:9091"
    environment = {**POD_ENV, "ODRADEK_ADVERTISED_LISTENERS": advertised}
    config = BrokerConfig.load(tmp_path / "broker.properties", environ=environment)
    [listener] = [lst for lst in config.listeners if lst.name == name]
    return config, listener


def test_an_oauth_listener_validates_tokens_of_its_issuer(tmp_path: Path) -> None:
    """The operator's OAUTHBEARER settings as the broker reads them: the JWKS it names is
    fetched, and a token of the issuer for the audience is accepted, naming its principal
    by the claim asked for."""
    keys = tmp_path / "jwks.json"
    keys.write_bytes(jwks(public_jwk(RSA_KEY, "key-1")))
    authentication = {
        "type": "oauth",
        "jwksEndpointUri": keys.as_uri(),
        "validIssuerUri": ISSUER,
        "audience": ["kafka"],
        "userNameClaim": "preferred_username",
    }
    config, listener = loaded_listener(tmp_path, "OAUTH", authentication)
    assert listener.security_protocol.name == "SASL_PLAINTEXT"
    sasl = listener_security(config, listener, lambda *_: None, b"x").sasl
    assert sasl is not None and sasl.names == ("OAUTHBEARER",)
    assert sasl.oauthbearer is not None
    now = int(time.time())
    valid = {"iat": now - 60, "exp": now + 3600, "preferred_username": "bob", "sub": "x-123"}
    assert sasl.oauthbearer(signed(claims(aud="kafka", **valid))).principal_name == "bob"
    with pytest.raises(InvalidToken):
        sasl.oauthbearer(signed(claims(aud="other", **valid)))


def test_a_plain_listener_takes_a_users_scram_password(tmp_path: Path) -> None:
    """A plain listener offers PLAIN only, and checks the password a client sends against
    the SCRAM credential the operator stored for the User."""
    config, listener = loaded_listener(tmp_path, "PASSWORDS", {"type": "plain"})
    assert listener.security_protocol.name == "SASL_PLAINTEXT"
    stored = {
        ("app", ScramMechanism.SCRAM_SHA_512): derive_credential(
            ScramMechanism.SCRAM_SHA_512, "app-secret"
        )
    }
    sasl = listener_security(config, listener, lambda *key: stored.get(key), b"x").sasl
    assert sasl is not None and sasl.names == ("PLAIN",)
    assert sasl.plain is not None
    assert sasl.plain("app", "app-secret")
    assert not sasl.plain("app", "guess") and not sasl.plain("other", "app-secret")
