"""A Cluster with a TLS listener on real pods: the operator makes its CA and issues every
broker a certificate (Secrets it owns); the brokers replicate over the TLS replication
listener, which takes only holders of a cluster CA certificate, and the operator
administers them there with its own; a client that trusts the CA from the
``<cluster>-cluster-ca-cert`` Secret produces and consumes over TLS, and so does a
MirrorMaker that names the TLS listener."""

from __future__ import annotations

import base64
import functools
import json
import subprocess
from pathlib import Path

import pytest
from e2e_kubectl import new_namespace, wait_for
from real_node import RealCluster
from real_pods import ready, small_cluster

pytestmark = pytest.mark.slow

NAME = "secure"
RECORDS = [f"key-{i}:value-{i}" for i in range(100)]
LISTENERS = [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]
MIRROR = {
    "apiVersion": "odradek.io/v1alpha1",
    "kind": "MirrorMaker",
    "metadata": {"name": "loop"},
    "spec": {
        "source": {"alias": "src", "cluster": NAME, "listener": "TLS"},
        "target": {"alias": "dst", "cluster": NAME, "listener": "PLAIN"},
        "topics": {"include": ["payments"]},
        "naming": "prefix",
        "replicas": 1,
    },
}


def kcat(
    cluster: RealCluster, *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cluster.client_argv(["kcat", *argv]),
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=90,
    )


def test_a_tls_cluster_replicates_over_tls_and_serves_clients_that_trust_its_ca(
    real_cluster: RealCluster, operator_pod: None, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    namespace = new_namespace(kubectl)
    try:
        kubectl.apply(namespace, small_cluster(NAME, brokers=2, listeners=LISTENERS))
        wait_for(
            f"cluster {NAME} Ready",
            lambda: ready(kubectl, "cluster", NAME, namespace),
            300,
            2,
            real_cluster.report,
        )
        for secret in ("cluster-ca", "cluster-ca-cert", "broker-certs", "operator-cert"):
            found = kubectl.get(namespace, "secret", f"{NAME}-{secret}")
            assert found is not None, secret
            assert found["metadata"]["ownerReferences"][0]["kind"] == "Cluster"
        ca_secret = kubectl.get(namespace, "secret", f"{NAME}-cluster-ca-cert")
        assert ca_secret is not None and set(ca_secret["data"]) == {"ca.crt"}
        ca = tmp_path / "ca.crt"
        ca.write_bytes(base64.b64decode(ca_secret["data"]["ca.crt"]))

        # a Topic: the operator reaches the brokers over the replication listener, with TLS
        topic = {
            "apiVersion": "odradek.io/v1alpha1",
            "kind": "Topic",
            "metadata": {"name": "payments"},
            "spec": {"cluster": NAME, "partitions": 2},
        }
        kubectl.apply(namespace, topic)
        wait_for(
            "topic payments Ready", lambda: ready(kubectl, "topic", "payments", namespace), 120, 2
        )

        tls = f"{NAME}-bootstrap.{namespace}.svc:9093"
        trusting = ["-X", "security.protocol=SSL", "-X", f"ssl.ca.location={ca}"]
        produced = kcat(
            real_cluster, "-b", tls, *trusting, "-P", "-t", "payments", "-K", ":",
            "-X", "acks=all", stdin="\n".join(RECORDS),
        )  # fmt: skip
        assert produced.returncode == 0, produced.stderr
        consumed = kcat(
            real_cluster, "-b", tls, *trusting, "-C", "-t", "payments", "-o", "beginning",
            "-e", "-f", "%k:%s\n",
        )  # fmt: skip
        assert consumed.returncode == 0, consumed.stderr
        assert sorted(consumed.stdout.split()) == sorted(RECORDS)

        # acks=all with min.insync.replicas 2: each record was replicated over TLS
        listed = kcat(real_cluster, "-b", tls, *trusting, "-L", "-J", "-m", "10")
        assert listed.returncode == 0, listed.stderr
        [partitions] = [
            t["partitions"] for t in json.loads(listed.stdout)["topics"] if t["topic"] == "payments"
        ]
        assert all(len(p["isrs"]) == 2 for p in partitions), partitions

        # a MirrorMaker reads the cluster through its TLS listener (trusting the CA the
        # operator mounts) and writes the copy back through the plaintext one
        kubectl.apply(namespace, MIRROR)
        copied = functools.partial(
            kcat, real_cluster, "-b", tls, *trusting, "-C", "-t", "src.payments",
            "-o", "beginning", "-e", "-f", "%k:%s\n",
        )  # fmt: skip
        mirrored = wait_for(
            "src.payments mirrored over TLS",
            lambda: (out := copied().stdout.split()) and len(out) >= len(RECORDS) and out,
            180,
            3,
            real_cluster.report,
        )
        assert sorted(mirrored) == sorted(RECORDS)

        # the TLS port speaks no plaintext; the replication port wants a CA certificate
        plaintext = kcat(real_cluster, "-b", tls, "-L", "-m", "5")
        assert plaintext.returncode != 0
        replication = f"{NAME}-bootstrap.{namespace}.svc:9091"
        anonymous = kcat(real_cluster, "-b", replication, *trusting, "-L", "-m", "5")
        assert anonymous.returncode != 0
    finally:
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)
