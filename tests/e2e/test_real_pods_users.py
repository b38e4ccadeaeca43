"""Users of a secured Cluster on real pods: a SCRAM-SHA-512 listener, a client-certificate
listener and a PLAIN listener taking the SCRAM Users' passwords, all over TLS, with ACLs
enforced. Each User gets a Secret; a client configured from nothing but that Secret may do
what its ACLs allow and is denied the rest; a change to a User's ACLs takes effect within
seconds, and deleting the User revokes its access. A MirrorMaker connects as one User on
each side (a password on one listener, a certificate on the other), read from their Secrets.
The Cluster's etcd speaks TLS and takes only clients with a certificate of the cluster CA.
An external listener (a NodePort per broker) serves a client outside the cluster's DNS, over
TLS verified against the node's address."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_kubectl import Kubectl, custom_resource, new_namespace, wait_for
from host_network import HOST_ADDRESS
from real_node import RealCluster
from real_pods import ready, small_cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "guarded"
LISTENERS = [
    {"name": "SCRAM", "port": 9092, "tls": True, "authentication": {"type": "scram-sha-512"}},
    {"name": "MTLS", "port": 9093, "tls": True, "authentication": {"type": "tls"}},
    {"name": "PASSWORDS", "port": 9095, "tls": True, "authentication": {"type": "plain"}},
    {
        "name": "EXTERNAL",
        "port": 9094,
        "tls": True,
        "authentication": {"type": "scram-sha-512"},
        "external": {"type": "nodeport"},
    },
]
WRITER_ACLS = [
    {
        "resource": {"type": "topic", "name": "orders-", "patternType": "prefix"},
        "operations": ["Write", "Describe"],
    }
]
READER_ACLS = [
    {
        "resource": {"type": "topic", "name": prefix, "patternType": "prefix"},
        "operations": ["Read", "Describe"],
    }
    for prefix in ("orders-", "src.")
]
MIRROR = {
    "source": {"alias": "src", "cluster": NAME, "listener": "SCRAM", "user": "mirror-source"},
    "target": {"alias": "dst", "cluster": NAME, "listener": "MTLS", "user": "mirror-target"},
    "topics": {"include": ["orders-eu"]},
    "naming": "prefix",
    "replicas": 1,
}
DENIED = "authorization failed"
WRITTEN = ["a", "b", "c", "d"]
"""What the writer writes to orders-eu: a, b and c in the cluster, d from outside it."""


def user(name: str, authentication: str, acls: list[dict[str, Any]]) -> dict[str, Any]:
    spec = {
        "cluster": NAME,
        "authentication": {"type": authentication},
        "authorization": {"acls": acls},
    }
    return custom_resource("User", name, spec)


def client_settings(kubectl: Kubectl, namespace: str, name: str, files: Path) -> list[str]:
    """kcat's -b and -X options, from the User's Secret alone (files written for the PEMs)."""
    secret = kubectl.get(namespace, "secret", name)
    assert secret is not None, f"no Secret {name}"
    data = {key: base64.b64decode(value) for key, value in secret["data"].items()}
    files.mkdir(exist_ok=True)
    settings = {"security.protocol": data["security.protocol"].decode()}
    for key, setting in (
        ("ca.crt", "ssl.ca.location"),
        ("user.crt", "ssl.certificate.location"),
        ("user.key", "ssl.key.location"),
    ):
        if key in data:
            (files / key).write_bytes(data[key])
            settings[setting] = str(files / key)
    if "password" in data:
        settings |= {
            "sasl.mechanism": data["sasl.mechanism"].decode(),
            "sasl.username": data["username"].decode(),
            "sasl.password": data["password"].decode(),
        }
    options = ["-b", data["bootstrap.servers"].decode()]
    for key, value in settings.items():
        options += ["-X", f"{key}={value}"]
    return options


def kcat(
    cluster: RealCluster, options: list[str], *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cluster.client_argv(["kcat", *options, *argv]),
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def produce(cluster: RealCluster, options: list[str], topic: str, values: list[str]) -> str:
    """What kcat said on stderr ("" when every record was acknowledged)."""
    result = kcat(
        cluster, options, "-P", "-t", topic, "-X", "acks=all", "-X", "message.timeout.ms=10000",
        stdin="\n".join(values),
    )  # fmt: skip
    return "" if result.returncode == 0 and not result.stderr.strip() else result.stderr


def external_produce(options: list[str], topic: str, values: list[str]) -> str:
    """``produce`` from the host's own network namespace and resolver: outside the cluster."""
    result = subprocess.run(
        ["kcat", *options, "-P", "-t", topic, "-X", "acks=all", "-X", "message.timeout.ms=10000"],
        input="\n".join(values),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return "" if result.returncode == 0 and not result.stderr.strip() else result.stderr


def consume(
    cluster: RealCluster, options: list[str], topic: str
) -> subprocess.CompletedProcess[str]:
    return kcat(cluster, options, "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%s\n")


def test_users_get_secrets_and_exactly_the_access_their_acls_give(
    real_cluster: RealCluster, operator_pod: None, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    namespace = new_namespace(kubectl)
    try:
        mirror_users = ["User:mirror-source", "User:mirror-target"]
        cluster = small_cluster(
            NAME, listeners=LISTENERS, authorization={"superUsers": mirror_users}
        )
        kubectl.apply(namespace, cluster)
        topics = [
            custom_resource("Topic", topic, {"cluster": NAME, "partitions": 1})
            for topic in ("orders-eu", "payments")
        ]
        writer = user("writer", "scram-sha-512", WRITER_ACLS)
        reader = user("reader", "tls", READER_ACLS)
        kubectl.apply(namespace, *topics, writer, reader)
        for kind, name in (
            ("cluster", NAME),
            ("topic", "orders-eu"),
            ("topic", "payments"),
            ("user", "writer"),
            ("user", "reader"),
        ):
            wait_for(
                f"{kind} {name} Ready",
                lambda kind=kind, name=name: ready(kubectl, kind, name, namespace),
                300,
                2,
                real_cluster.report,
            )
        # etcd, which the operator runs for the Cluster, takes only cluster CA certificates
        operator_cert = kubectl.get(namespace, "secret", f"{NAME}-operator-cert")
        assert operator_cert is not None
        certs = tmp_path / "operator"
        certs.mkdir()
        for key, value in operator_cert["data"].items():
            (certs / key).write_bytes(base64.b64decode(value))
        etcd = f"https://{NAME}-etcd-0.{NAME}-etcd.{namespace}.svc:2379/version"
        trusting = ["curl", "-sS", "--max-time", "10", "--cacert", str(certs / "ca.crt"), etcd]
        anonymous = subprocess.run(
            real_cluster.client_argv(trusting), capture_output=True, text=True, check=False
        )
        assert anonymous.returncode != 0, anonymous.stdout
        holding = [*trusting, "--cert", str(certs / "tls.crt"), "--key", str(certs / "tls.key")]
        version = subprocess.run(
            real_cluster.client_argv(holding), capture_output=True, text=True, check=False
        )
        assert version.returncode == 0 and '"etcdserver"' in version.stdout, version.stderr

        found = kubectl.get(namespace, "user", "writer")
        assert found is not None
        assert found["status"]["principal"] == "User:writer"
        assert found["status"]["secret"] == "writer"
        as_writer = client_settings(kubectl, namespace, "writer", tmp_path / "writer")
        as_reader = client_settings(kubectl, namespace, "reader", tmp_path / "reader")
        assert "security.protocol=SASL_SSL" in as_writer
        assert "security.protocol=SSL" in as_reader

        # the writer writes where its ACLs say, and nowhere else
        assert produce(real_cluster, as_writer, "orders-eu", ["a", "b", "c"]) == ""
        assert DENIED in produce(real_cluster, as_writer, "payments", ["x"]).lower()
        # the writer's password logs in with PLAIN too, on the plain listener, and sees the
        # topics its ACLs let it describe; a wrong password is refused
        by_plain = [
            "sasl.mechanism=PLAIN" if option.startswith("sasl.mechanism=") else option
            for option in as_writer
        ]
        by_plain[1] = by_plain[1].replace(":9092", ":9095")
        listed = kcat(real_cluster, by_plain, "-L", "-J")
        assert listed.returncode == 0, listed.stderr
        described = {topic["topic"] for topic in json.loads(listed.stdout)["topics"]}
        assert "orders-eu" in described and "payments" not in described, described
        guessing = [
            "sasl.password=guess" if option.startswith("sasl.password=") else option
            for option in by_plain
        ]
        assert "authentication" in produce(real_cluster, guessing, "orders-eu", ["x"]).lower()
        # the reader (a client certificate from the clients CA) reads, and may not write
        read = consume(real_cluster, as_reader, "orders-eu")
        assert read.returncode == 0, read.stderr
        assert read.stdout.split() == ["a", "b", "c"]
        assert DENIED in produce(real_cluster, as_reader, "orders-eu", ["y"]).lower()
        assert DENIED in consume(real_cluster, as_reader, "payments").stderr.lower()

        # from outside the Kubernetes cluster (no cluster DNS): the external listener's node
        # port, the broker advertising its node's address, named in its certificate
        service = kubectl.get(namespace, "service", f"{NAME}-broker-0-external")
        assert service is not None and service["spec"]["type"] == "NodePort"
        outside = [*as_writer]
        outside[1] = f"{HOST_ADDRESS}:{service['spec']['ports'][0]['nodePort']}"
        wait_for(
            "the writer writing through the external listener",
            lambda: external_produce(outside, "orders-eu", ["d"]) == "",
            180,
            5,
            real_cluster.report,
        )
        listed = subprocess.run(
            ["kcat", *outside, "-L", "-J"], capture_output=True, text=True, timeout=60, check=True
        )
        [advertised] = json.loads(listed.stdout)["brokers"]
        assert advertised["name"] == outside[1], advertised
        read = consume(real_cluster, as_reader, "orders-eu")
        assert read.stdout.split() == WRITTEN, read.stderr

        # a MirrorMaker as a SCRAM User on the source side and a certificate User on the target
        mirror_source = user("mirror-source", "scram-sha-512", [])
        mirror_target = user("mirror-target", "tls", [])
        kubectl.apply(namespace, mirror_source, mirror_target)
        for name in ("mirror-source", "mirror-target"):
            wait_for(
                f"user {name} Ready",
                lambda name=name: ready(kubectl, "user", name, namespace),
                120,
                2,
                real_cluster.report,
            )
        kubectl.apply(namespace, custom_resource("MirrorMaker", "loop", MIRROR))

        def mirror_report() -> str:
            log = kubectl.run("logs", "-n", namespace, "deploy/loop-mirror", check=False)
            return f"{real_cluster.report()}\n--- the mirror's log\n{log[-4000:]}"

        wait_for(
            "orders-eu mirrored into src.orders-eu",
            lambda: consume(real_cluster, as_reader, "src.orders-eu").stdout.split() == WRITTEN,
            240,
            3,
            mirror_report,
        )

        # a new rule takes effect within seconds
        payments = {"resource": {"type": "topic", "name": "payments"}, "operations": ["Write"]}
        more = [*WRITER_ACLS, payments]
        kubectl.apply(namespace, user("writer", "scram-sha-512", more))
        wait_for(
            "writer allowed to write payments",
            lambda: produce(real_cluster, as_writer, "payments", ["p"]) == "",
            60,
            2,
            real_cluster.report,
        )

        # deleting the User revokes its credential, and its Secret goes
        kubectl.run("delete", "-n", namespace, "user", "writer", "--wait=true", "--timeout=60s")
        wait_for(
            "the writer's credential revoked",
            lambda: (
                "authentication" in produce(real_cluster, as_writer, "orders-eu", ["z"]).lower()
            ),
            60,
            2,
            real_cluster.report,
        )
        wait_for(
            "the writer's Secret deleted",
            lambda: kubectl.get(namespace, "secret", "writer") is None,
            60,
            2,
        )
        read = consume(real_cluster, as_reader, "orders-eu")
        assert read.returncode == 0 and read.stdout.split() == WRITTEN, read.stderr
    finally:
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)
