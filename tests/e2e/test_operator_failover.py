"""A broker whose node is lost, with its data on a local volume there, is rebuilt elsewhere."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_harness import ClusterFactory
from e2e_kubectl import Kubectl, new_namespace, wait_for
from kubelet_stand_in import KubeletStandIn
from local_volumes import local_volume
from operator_scenario import CLUSTERS, Scenario, pointed_at, selector

pytestmark = pytest.mark.slow

NODE = "node-lost"
CLAIM = "data-lost-broker-0"


def lost_volume(namespace: str) -> dict[str, Any]:
    """A local PersistentVolume on NODE, reserved for broker 0's claim."""
    spec = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Delete",
        "claimRef": {"namespace": namespace, "name": CLAIM},
    }
    return local_volume(f"{namespace}-lost-0", NODE, Path("/var/lib/odradek-e2e"), spec)


def bound(claim: dict[str, Any] | None) -> dict[str, Any] | None:
    return claim if claim and claim.get("status", {}).get("phase") == "Bound" else None


def replaced(obj: dict[str, Any] | None, old: dict[str, Any]) -> dict[str, Any] | None:
    """``obj`` when it is a new object of the same name as ``old``."""
    return obj if obj and obj["metadata"]["uid"] != old["metadata"]["uid"] else None


def test_a_broker_on_a_lost_node_is_replaced_with_a_new_claim(
    kubectl: Kubectl, operator: None, kubelet: KubeletStandIn, brokers: ClusterFactory
) -> None:
    namespace = new_namespace(kubectl)
    scenario = Scenario(kubectl, kubelet, namespace, brokers(1), cluster="lost")
    try:
        kubelet.register_node(NODE, "zone-x")
        kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(lost_volume(namespace)))
        spec = {
            "replicas": 1,
            "storage": {"size": "1Gi"},
            "failover": {"gracePeriodSeconds": 30},
            "coordination": {"external": {"endpoints": ["http://etcd.example:2379"]}},
        }
        cluster = {
            "apiVersion": "odradek.io/v1alpha1",
            "kind": "Cluster",
            "metadata": {"name": "lost"},
            "spec": spec,
        }
        kubectl.apply(namespace, pointed_at(cluster, scenario.loopback))
        claim = wait_for(
            "the claim bound to the local volume",
            lambda: bound(kubectl.get(namespace, "pvc", CLAIM)),
            timeout=60,
            every=0.5,
        )
        kubelet.start_pods(namespace, selector("lost", "broker"), [NODE])
        scenario.wait_condition(lambda c: c["status"] == "True", "Ready on the healthy node")
        [pod] = scenario.broker_pods().values()

        kubelet.set_node_ready(NODE, "Unknown", since=timedelta(minutes=10))
        condition = scenario.wait_condition(
            lambda c: c["reason"] == "BrokerReplaced", "the broker replaced"
        )
        assert condition["message"].startswith(f"broker 0: node {NODE} has not been ready since")
        wait_for(
            "a new broker pod", lambda: replaced(scenario.broker_pods().get(0), pod), every=0.5
        )
        new_claim = wait_for(
            "a new claim",
            lambda: replaced(kubectl.get(namespace, "pvc", CLAIM), claim),
            timeout=60,
            every=0.5,
        )
        assert new_claim["status"]["phase"] == "Pending"  # the old volume stays with the lost node
        [record] = scenario.resource()["status"]["replacedBrokers"]
        assert f"broker 0: node {NODE}" in record
    finally:
        kubectl.run("delete", CLUSTERS, "lost", "-n", namespace, "--wait=false", check=False)
        kubectl.run("delete", "namespace", namespace, "--wait=false")
        kubectl.run("delete", "node", NODE, "--wait=false", check=False)
        kubectl.run("delete", "pv", f"{namespace}-lost-0", "--wait=false", check=False)
