"""A Cluster with a TLS listener on real pods: the operator keeps its CA and issues every
broker a certificate (Secrets it owns); the brokers replicate over the TLS replication
listener, which takes only holders of a cluster CA certificate, and the operator
administers them there with its own; a client that trusts the CAs of the
``<cluster>-cluster-ca-cert`` Secret produces and consumes over TLS, and so does a
MirrorMaker that names the TLS listener. The CA is one due for renewal: it is renewed at
once, signs the brokers' certificates for a few more minutes, then the brokers serve
certificates of the new CA, reloaded without a restart, while a producer and a consumer
started before run on to the end, losing nothing."""

from __future__ import annotations

import base64
import datetime
import functools
import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_kubectl import Kubectl, new_namespace, wait_for
from prometheus_process import chart_rule_groups, running_prometheus, why_not
from real_node import RealCluster
from real_pods import ready, small_cluster

from odradek.operator.builders.certificates import KeyPair, new_ca

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "secure"
RECORDS = [f"key-{i}:value-{i}" for i in range(100)]
LISTENERS = [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]
CLUSTER_CA = {"validityDays": 2, "renewalDays": 1}
RENEWAL = datetime.timedelta(days=1)
SWITCH_AFTER = datetime.timedelta(minutes=3)
PEM = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", re.DOTALL)
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


def seeded_ca(expires_in: datetime.timedelta) -> KeyPair:
    """A cluster CA made ahead of the Cluster (as a user may bring one), due for renewal."""
    now = datetime.datetime.now(datetime.UTC)
    return new_ca(f"{NAME}-cluster-ca", expires_in, now)


def ca_secret(ca: KeyPair) -> dict[str, Any]:
    data = {"ca.key": ca.key_pem, "ca.crt": ca.cert_pem}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"{NAME}-cluster-ca"},
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }


def test_a_tls_cluster_replicates_over_tls_and_renews_its_certificates_under_running_clients(
    real_cluster: RealCluster, operator_pod: None, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    namespace = new_namespace(kubectl)
    # A CA the operator renews at once (it expires within renewalDays) and which, as the
    # previous CA, signs the brokers' certificates until half a day before it expires:
    # SWITCH_AFTER from now. Then every certificate comes from the new CA.
    old = seeded_ca(RENEWAL / 2 + SWITCH_AFTER)
    switch_at = time.monotonic() + SWITCH_AFTER.total_seconds()
    clients: list[subprocess.Popen[str]] = []
    try:
        kubectl.apply(namespace, ca_secret(old))
        cluster = small_cluster(NAME, brokers=2, listeners=LISTENERS, clusterCa=CLUSTER_CA)
        kubectl.apply(namespace, cluster)
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
        ca_secret_found = kubectl.get(namespace, "secret", f"{NAME}-cluster-ca-cert")
        assert ca_secret_found is not None and set(ca_secret_found["data"]) == {"ca.crt"}
        bundle = base64.b64decode(ca_secret_found["data"]["ca.crt"])
        trusted = PEM.findall(bundle)
        assert len(trusted) == 2 and trusted[1] == old.cert_pem, "the new CA and the old one"
        ca = tmp_path / "ca.crt"  # what a client reads from the Secret: both CAs
        ca.write_bytes(bundle)
        new_only = tmp_path / "new-ca.crt"
        new_only.write_bytes(trusted[0])

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

        # A consumer and a producer that run across the certificates' renewal
        assert time.monotonic() < switch_at - 30, "the cluster took too long to come up"
        pods = {
            p["metadata"]["name"]: p["metadata"]["uid"] for p in broker_pods(kubectl, namespace)
        }
        later = [f"later-{i}:value-{i}" for i in range(100)]
        expected = str(len(RECORDS) + len(later))
        consumer = popen(
            real_cluster, "-b", tls, *trusting, "-C", "-t", "payments", "-o", "beginning",
            "-c", expected, "-f", "%k:%s\n",
        )  # fmt: skip
        producer = popen(
            real_cluster, "-b", tls, *trusting, "-P", "-t", "payments", "-K", ":",
            "-X", "acks=all", stdin=True,
        )  # fmt: skip
        clients += [consumer, producer]
        assert producer.stdin is not None
        producer.stdin.write("\n".join(later[:50]) + "\n")
        producer.stdin.flush()

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
            lambda: (out := set(copied().stdout.split())) >= set(RECORDS) and out,
            180,
            3,
            real_cluster.report,
        )
        assert set(RECORDS) <= mirrored

        # the TLS port speaks no plaintext; the replication port wants a CA certificate
        plaintext = kcat(real_cluster, "-b", tls, "-L", "-m", "5")
        assert plaintext.returncode != 0
        replication = f"{NAME}-bootstrap.{namespace}.svc:9091"
        anonymous = kcat(real_cluster, "-b", replication, *trusting, "-L", "-m", "5")
        assert anonymous.returncode != 0

        # the brokers come to serve certificates of the new CA, without a restart
        only_new = ["-X", "security.protocol=SSL", "-X", f"ssl.ca.location={new_only}"]
        wait_for(
            "the brokers serving certificates of the new CA",
            lambda: kcat(real_cluster, "-b", tls, *only_new, "-L", "-m", "5").returncode == 0,
            SWITCH_AFTER.total_seconds() + 300,
            5,
            real_cluster.report,
        )
        assert time.monotonic() >= switch_at - 60, "renewed before the old CA stopped signing"
        producer.stdin.write("\n".join(later[50:]) + "\n")
        producer.stdin.close()
        assert producer.wait(120) == 0, producer.stderr.read() if producer.stderr else ""
        out, err = consumer.communicate(timeout=120)
        assert consumer.returncode == 0, err
        assert sorted(out.split()) == sorted(RECORDS + later)
        after = {p["metadata"]["name"]: p for p in broker_pods(kubectl, namespace)}
        assert {name: pod["metadata"]["uid"] for name, pod in after.items()} == pods
        for pod in after.values():
            assert all(c["restartCount"] == 0 for c in pod["status"]["containerStatuses"])
        certificate_alert_reads_the_brokers(real_cluster, namespace, tmp_path, sorted(pods))
    finally:
        for client in clients:
            client.kill()
            client.wait()
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)


def popen(cluster: RealCluster, *argv: str, stdin: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cluster.client_argv(["kcat", *argv]),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def broker_pods(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    return kubectl.items(
        namespace, "pods", f"app.kubernetes.io/instance={NAME},app.kubernetes.io/component=broker"
    )


def certificate_alert_reads_the_brokers(
    cluster: RealCluster, namespace: str, tmp_path: Path, pods: list[str]
) -> None:
    """A real Prometheus scraping the brokers evaluates the chart's certificate alert: the
    renewed certificates (about two days left) are inside a 3-day renewal window, so the
    alert is pending for each broker, and outside a 1-day one, so it is not."""
    if reason := why_not():
        pytest.fail(reason)
    due, not_due = (
        [
            {**group, "name": f"{group['name']}-{days}"}
            for group in chart_rule_groups(
                cluster, f"metrics.prometheusRule.certificateRenewalDays={days}"
            )
        ]
        for days in (3, 1)
    )
    pki = cluster.plane.pki
    with running_prometheus(
        tmp_path / "prometheus", cluster.kubectl, (pki.admin_cert, pki.admin_key),
        due + not_due, namespace,
    ) as prometheus:  # fmt: skip
        expiry = f'odradek_tls_certificate_expiry_timestamp_seconds{{namespace="{namespace}"}}'
        # each broker: its TLS listener and the replication listener
        wanted = sorted((pod, listener) for pod in pods for listener in ("REPLICATION", "TLS"))

        def scraped() -> list[tuple[str, str]]:
            series = prometheus.query(expiry)
            return sorted((s["metric"]["pod"], s["metric"]["listener"]) for s in series)

        wait_for("the brokers' certificate expiry series", lambda: scraped() == wanted, 60, 2)

        last: dict[str, Any] = {}

        def alert_states() -> dict[str, str] | None:
            """Each window's state of the alert, once the 3-day one is pending for every
            broker and the 1-day one inactive (a listener may serve the old CA's certificate,
            expiring sooner, until its next check of the files)."""
            rules = {
                group["name"].rsplit("-", 1)[1]: rule
                for group in prometheus.api("rules")["groups"]
                for rule in group["rules"]
                if rule["name"] == "OdradekCertificateNotRenewed"
            }
            last.update(rules)
            due = sorted(a["labels"]["pod"] for a in rules.get("3", {}).get("alerts", []))
            states = {days: rule["state"] for days, rule in rules.items()}
            return states if due == pods and states.get("1") == "inactive" else None

        states = wait_for(
            "the certificate alert pending for each broker with 3 days, not with 1",
            alert_states,
            90,
            2,
            lambda: json.dumps(last, indent=1),
        )
        assert states == {"3": "pending", "1": "inactive"}, states
