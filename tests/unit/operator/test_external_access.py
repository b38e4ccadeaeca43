"""Where external clients reach each broker: what its certificate must name."""

from __future__ import annotations

from odradek.operator.handlers.external_access import certificate_addresses, load_balancer_host
from odradek.operator.models import ClusterSpec


def spec(*kinds: str) -> ClusterSpec:
    listeners = [{"name": "PLAIN", "port": 9092}] + [
        {"name": f"E{i}", "port": 9093 + i, "external": {"type": kind}}
        for i, kind in enumerate(kinds)
    ]
    return ClusterSpec.model_validate({"listeners": listeners})


def test_a_load_balancers_ip_comes_before_its_host_name() -> None:
    ingress = [{"hostname": "lb.example.com", "ip": "198.18.0.7"}]
    assert load_balancer_host({"status": {"loadBalancer": {"ingress": ingress}}}) == "198.18.0.7"
    named = {"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}}
    assert load_balancer_host(named) == "lb.example.com"
    assert load_balancer_host({"status": {"loadBalancer": {}}}) is None
    assert load_balancer_host({}) is None


def test_a_certificate_names_the_node_only_for_node_ports_and_every_load_balancer() -> None:
    nodes = {0: "10.0.0.1", 1: "10.0.0.2"}
    balancers = {0: ["198.18.0.7"]}
    assert certificate_addresses(spec("loadbalancer"), nodes, balancers) == {0: ["198.18.0.7"]}
    assert certificate_addresses(spec("nodeport"), nodes, {}) == {
        0: ["10.0.0.1"],
        1: ["10.0.0.2"],
    }
    assert certificate_addresses(spec("nodeport", "loadbalancer"), nodes, balancers) == {
        0: ["10.0.0.1", "198.18.0.7"],
        1: ["10.0.0.2"],
    }
