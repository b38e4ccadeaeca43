"""A 3-broker cluster secured end to end (issue 16, "What it must show" 4).

Each broker's only listeners are INTERNAL (SASL_SSL, inter-broker) and CLIENTS (SSL,
client certificates required), and etcd is reached over TLS with client certificates
(secured_cluster.py). Replication logs in to the leader (and again within
connections.max.reauth.ms), clients produce with acks=all and consume back over mutual
TLS, a broker certificate replaced on disk is served without a restart, and a follower
with a wrong inter-broker password cannot fetch and leaves the ISR while the others carry
on. The fault test (test_cluster_failover.py) runs on this cluster too.
"""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka.admin import AdminClient, NewTopic
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka_wire import WireClient
from replica_logs import assert_replicas_identical, stored_batches
from sasl_wire import authenticate, handshake
from secured_cluster import BROKER_PASSWORD, REAUTH_MS, SecuredCluster, secured_cluster_pool
from test_cluster_failover import produce_acked
from test_durability import read_partitions

pytestmark = pytest.mark.slow


def _logs(cluster: Cluster) -> dict[int, str]:
    """Each broker's log without the harness's own "=== start: <argv>" lines (the argv
    holds the JAAS config, passwords and all)."""
    return {
        node_id: "\n".join(
            line
            for line in broker.log_path.read_text(errors="replace").splitlines()
            if not line.startswith("=== start:")
        )
        for node_id, broker in cluster.brokers.items()
    }


def _listener_port(cluster: Cluster, node_id: int, name: str) -> int:
    found = re.search(rf"{name}://[^:,]+:(\d+)", cluster.brokers[node_id].settings["listeners"])
    assert found is not None
    return int(found.group(1))


def _served_serial(port: int, context: ssl.SSLContext) -> int:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


def _serves(port: int, context: ssl.SSLContext, serial: int) -> Callable[[], bool]:
    return lambda: _served_serial(port, context) == serial


def _scram_salt(port: int, tls: ssl.SSLContext, user: str) -> str:
    """The salt a broker's SCRAM-SHA-512 server-first message gives ``user``."""
    with WireClient("127.0.0.1", port, tls=tls) as wire:
        assert handshake(wire, "SCRAM-SHA-512").error_code.value == 0
        server_first = authenticate(wire, f"n,,n={user},r=nonce".encode()).auth_bytes.decode()
    return dict(part.split("=", 1) for part in server_first.split(","))["s"]


def test_brokers_replicate_over_sasl_ssl_and_log_in_again_within_the_session_lifetime(
    secured_cluster_factory: ClusterFactory,
) -> None:
    cluster = secured_cluster_factory(brokers=3)
    topic = cluster.create_topic(3, 3, {"min.insync.replicas": "2"}, prefix="secured")
    produced = produce_acked(cluster.bootstrap, topic, 300, client_config=cluster.client_config)
    stored = read_partitions(cluster.bootstrap, topic, 3, cluster.client_config)
    values = sorted(value for records in stored.values() for _, value in records)
    assert values == sorted(f"r{index}".encode() for index in range(produced))
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "all replicas in sync")
    assert_replicas_identical(cluster, topic, 3)

    # One connection (one peer address) authenticating twice is a re-authentication.
    login = re.compile(r"(\(.*?\)) authenticated on INTERNAL as User:broker with SCRAM-SHA-512")

    def logged_in_again() -> bool:
        for text in _logs(cluster).values():
            peers = login.findall(text)
            if len(peers) != len(set(peers)):
                return True
        return False

    cluster.wait_until(logged_in_again, "a replica fetcher re-authenticated", REAUTH_MS / 1000 * 4)
    # SCRAM answers an unknown user with a made-up salt, the same on every broker (a secret
    # the cluster shares), so comparing brokers does not tell a real user from an unknown one
    tls = cast(SecuredCluster, cluster.security).wire_tls()
    internal = [_listener_port(cluster, node, "INTERNAL") for node in range(3)]
    for user in ("broker", "no-such-user"):
        salts = {_scram_salt(port, tls, user) for port in internal}
        assert len(salts) == 1, f"{user}: {salts}"
    for node_id, text in _logs(cluster).items():
        assert BROKER_PASSWORD not in text, f"broker {node_id} logged the password"
    produce_acked(
        cluster.bootstrap, topic, 100, prefix="later-", client_config=cluster.client_config
    )
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "in sync after re-authentication")


def test_a_broker_certificate_replaced_on_disk_is_served_without_a_restart(
    secured_cluster_factory: ClusterFactory,
) -> None:
    cluster = secured_cluster_factory(brokers=3)
    security = cast(SecuredCluster, cluster.security)
    context = security.wire_tls()
    ports = {name: _listener_port(cluster, 0, name) for name in ("CLIENTS", "INTERNAL")}
    before = {name: _served_serial(port, context) for name, port in ports.items()}
    pid = cluster.brokers[0].pid
    serial = security.replace_key_store(0)
    assert serial not in before.values()
    for name, port in ports.items():
        cluster.wait_until(_serves(port, context, serial), f"{name} serves the new certificate")
    assert cluster.brokers[0].pid == pid and cluster.brokers[0].is_running()
    # The new certificate also serves replication (SASL_SSL) and clients (mTLS).
    topic = cluster.create_topic(1, 3, prefix="rotated")
    produce_acked(cluster.bootstrap, topic, 50, client_config=cluster.client_config)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicated after rotation")


def test_a_follower_with_a_wrong_inter_broker_password_cannot_fetch_and_leaves_the_isr(
    tmp_path: Path,
) -> None:
    wrong = "not-the-broker-password"
    with secured_cluster_pool(tmp_path, mechanism="PLAIN") as (make, security):
        cluster = make(3, per_node={2: {security.jaas_key: security.jaas(wrong)}})
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap, **cluster.client_config})
        topic = f"bad-login-{time.monotonic_ns()}"
        new = NewTopic(
            topic, 1, replica_assignment=[[0, 1, 2]], config={"min.insync.replicas": "2"}
        )
        admin.create_topics([new])[topic].result(timeout=30)
        cluster.wait_until(
            lambda: (
                cluster.partition(topic, 0).leader == 0
                and set(cluster.partition(topic, 0).isr) == {0, 1}
            ),
            "broker 2 out of the ISR, broker 1 in it",
        )
        produce_acked(cluster.bootstrap, topic, 50, client_config=cluster.client_config)
        assert assert_replicas_identical(cluster, topic, 1) == {0: 50}
        assert stored_batches(cluster.brokers[2].data_dir, topic, 0) == {}
        assert 2 not in cluster.partition(topic, 0).isr
        logs = _logs(cluster)
        assert "Invalid username or password for user 'broker'" in logs[0], logs[0][-3000:]
        assert "refused the PLAIN login of broker" in logs[2], logs[2][-3000:]
        for node_id, text in logs.items():
            assert wrong not in text and BROKER_PASSWORD not in text, f"broker {node_id}"


def test_brokers_log_in_to_each_other_with_an_oauthbearer_token_reread_from_its_file(
    tmp_path: Path,
) -> None:
    with secured_cluster_pool(tmp_path, mechanism="OAUTHBEARER") as (make, security):
        cluster = make(3)
        topic = cluster.create_topic(1, 3, {"min.insync.replicas": "2"}, prefix="oauth")
        produce_acked(cluster.bootstrap, topic, 100, client_config=cluster.client_config)
        cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicated over OAUTHBEARER")
        login = "authenticated on INTERNAL as User:broker with OAUTHBEARER"
        assert any(login in text for text in _logs(cluster).values())

        # a token the brokers do not trust, rotated in: the next logins (re-authentication
        # within connections.max.reauth.ms) are refused
        security.write_token(key=rsa.generate_private_key(public_exponent=65537, key_size=2048))
        refused = "refused the OAUTHBEARER login of the token in"
        cluster.wait_until(
            lambda: any(refused in text for text in _logs(cluster).values()),
            "a follower's login with the untrusted token refused",
            REAUTH_MS / 1000 * 4,
        )
        security.write_token()  # a trusted one again: the followers log in and catch up
        produce_acked(
            cluster.bootstrap, topic, 100, prefix="later-", client_config=cluster.client_config
        )
        cluster.wait_until(lambda: cluster.fully_replicated(topic), "in sync with a new token")
        assert_replicas_identical(cluster, topic, 1)
