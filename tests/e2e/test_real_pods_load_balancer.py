"""An external listener behind a load balancer per broker, on real pods: MetalLB's
controller gives each broker's LoadBalancer Service an address, the operator records it,
the starting broker (which waits for it) advertises it, and the broker's certificate
names it; a client on the host reaches the brokers only through those addresses, over
TLS verified against them."""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
from pathlib import Path

import pytest
from e2e_kubectl import custom_resource, new_namespace, wait_for
from metallb import running_metallb
from real_node import RealCluster
from real_pods import ready, small_cluster

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NAME = "balanced"
POOL = "198.18.0.0/29"
"""Addresses no network here uses (RFC 2544's benchmarking range)."""
LISTENERS = [
    {"name": "PLAIN", "port": 9092},
    {"name": "PUBLIC", "port": 9095, "tls": True, "external": {"type": "loadbalancer"}},
]
RECORDS = ["one", "two", "three"]


def kcat(
    options: list[str], *argv: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """kcat from the host's own network namespace and resolver: outside the cluster."""
    return subprocess.run(
        ["kcat", *options, *argv], input=stdin, capture_output=True, text=True, check=False,
        timeout=60,
    )  # fmt: skip


def test_brokers_behind_load_balancers_advertise_and_certify_their_addresses(
    real_cluster: RealCluster, operator_pod: None, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    namespace = new_namespace(kubectl)
    try:
        with running_metallb(real_cluster, POOL):
            kubectl.apply(namespace, small_cluster(NAME, brokers=2, listeners=LISTENERS))
            topic = custom_resource("Topic", "greetings", {"cluster": NAME, "partitions": 2})
            kubectl.apply(namespace, topic)
            for kind, name in (("cluster", NAME), ("topic", "greetings")):
                wait_for(
                    f"{kind} {name} Ready",
                    lambda kind=kind, name=name: ready(kubectl, kind, name, namespace),
                    300,
                    2,
                    real_cluster.report,
                )
            addresses = []
            for broker in range(2):
                service = kubectl.get(namespace, "service", f"{NAME}-broker-{broker}-public")
                assert service is not None and service["spec"]["type"] == "LoadBalancer"
                [ingress] = service["status"]["loadBalancer"]["ingress"]
                assert ipaddress.ip_address(ingress["ip"]) in ipaddress.ip_network(POOL)
                addresses.append(f"{ingress['ip']}:9095")
            ca_secret = kubectl.get(namespace, "secret", f"{NAME}-cluster-ca-cert")
            assert ca_secret is not None
            ca = tmp_path / "ca.crt"
            ca.write_bytes(base64.b64decode(ca_secret["data"]["ca.crt"]))
            # the client knows only the first load balancer's address; the certificate is
            # checked against it (librdkafka verifies the host name by default)
            options = ["-b", addresses[0], "-X", "security.protocol=SSL",
                       "-X", f"ssl.ca.location={ca}",
                       "-X", "ssl.endpoint.identification.algorithm=https"]  # fmt: skip
            listed = wait_for(
                "metadata through the load balancer",
                lambda: (done := kcat(options, "-L", "-J")).returncode == 0 and done,
                180,
                5,
                real_cluster.report,
            )
            advertised = sorted(b["name"] for b in json.loads(listed.stdout)["brokers"])
            assert advertised == sorted(addresses)
            produced = kcat(options, "-P", "-t", "greetings", "-X", "acks=all",
                            stdin="\n".join(RECORDS))  # fmt: skip
            assert produced.returncode == 0 and not produced.stderr.strip(), produced.stderr
            consumed = kcat(options, "-C", "-t", "greetings", "-o", "beginning", "-e")
            assert consumed.returncode == 0, consumed.stderr
            assert sorted(consumed.stdout.split()) == sorted(RECORDS)
    finally:
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)
