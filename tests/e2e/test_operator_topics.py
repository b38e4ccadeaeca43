"""Topics and MirrorMakers through the operator, on a real API server and real brokers.

A one-broker Odradek cluster on loopback is the Cluster "events" (through its
admin-bootstrap-servers annotation), so a Topic resource becomes a real topic.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from cluster_harness import ClusterFactory
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exports
    AdminClient,
    ConfigResource,
    NewTopic,
)
from e2e_kubectl import Kubectl, new_namespace, wait_for
from kubelet_stand_in import KubeletStandIn
from operator_scenario import MIRRORMAKERS, NODES, TOPICS, Scenario, pointed_at

pytestmark = pytest.mark.slow


def resource(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


@pytest.fixture(scope="module")
def scenario(kubectl: Kubectl, operator: None, brokers: ClusterFactory) -> Iterator[Scenario]:
    """Needs no kubelet: runs on any cluster (only the MirrorMaker test plays one)."""
    namespace = new_namespace(kubectl)
    scenario = Scenario(kubectl, KubeletStandIn(kubectl), namespace, brokers(1))
    cluster = resource(
        "Cluster",
        "events",
        {
            "replicas": 1,
            "config": {"default.replication.factor": 1, "min.insync.replicas": 1},
            "coordination": {"external": {"endpoints": ["http://etcd.example:2379"]}},
        },
    )
    kubectl.apply(namespace, pointed_at(cluster, scenario.loopback))
    yield scenario
    kubectl.run("delete", "namespace", namespace, "--wait=false")


def kafka_topic(scenario: Scenario, name: str) -> tuple[int, dict[str, str]] | None:
    """Partitions and configs of the topic as the brokers have it, or None."""
    admin = AdminClient({"bootstrap.servers": scenario.loopback.bootstrap})
    found = admin.list_topics(timeout=10).topics.get(name)
    if found is None or found.error is not None:
        return None
    [future] = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, name)]).values()
    configs = {k: v.value for k, v in future.result(timeout=10).items()}
    return len(found.partitions), configs


def edit(scenario: Scenario, name: str, spec: dict[str, Any]) -> None:
    scenario.kubectl.run(
        "patch",
        TOPICS,
        name,
        "-n",
        scenario.namespace,
        "--type=merge",
        "-p",
        json.dumps({"spec": spec}),
    )


def test_a_topic_is_created_in_the_brokers_and_reported_ready(scenario: Scenario) -> None:
    spec = {"cluster": "events", "partitions": 3, "config": {"retention.ms": 3600000}}
    scenario.kubectl.apply(scenario.namespace, resource("Topic", "orders", spec))
    ready = scenario.wait_condition(
        lambda c: c["status"] == "True", "Topic Ready", kind=TOPICS, name="orders"
    )
    assert ready["reason"] == "Applied"
    found = kafka_topic(scenario, "orders")
    assert found is not None and found[0] == 3 and found[1]["retention.ms"] == "3600000"
    status = scenario.get(TOPICS, "orders")["status"]
    assert (status["partitions"], status["replicas"], status["observedGeneration"]) == (3, 1, 1)
    assert status["topicId"]
    assert scenario.get(TOPICS, "orders")["metadata"]["finalizers"] == ["odradek.io/topic"]


def test_partitions_are_added_and_a_decrease_is_refused(scenario: Scenario) -> None:
    edit(scenario, "orders", {"partitions": 5})
    scenario.wait_condition(
        lambda c: c["status"] == "True", "5 partitions applied", kind=TOPICS, name="orders"
    )
    assert scenario.get(TOPICS, "orders")["status"]["partitions"] == 5
    assert (kafka_topic(scenario, "orders") or (0,))[0] == 5
    edit(scenario, "orders", {"partitions": 2})
    refused = scenario.wait_condition(
        lambda c: c["status"] == "False", "the decrease refused", kind=TOPICS, name="orders"
    )
    assert refused["reason"] == "ChangeRefused"
    assert refused["message"] == "partitions cannot decrease from 5 to 2; the topic keeps 5"
    assert (kafka_topic(scenario, "orders") or (0,))[0] == 5


def test_deleting_a_topic_deletes_it_from_the_brokers(scenario: Scenario) -> None:
    scenario.kubectl.run("delete", TOPICS, "orders", "-n", scenario.namespace, "--timeout=60s")
    assert kafka_topic(scenario, "orders") is None


def test_a_mirrormaker_runs_as_a_deployment_and_reports_what_it_mirrors(
    scenario: Scenario, kubelet: KubeletStandIn
) -> None:
    admin = AdminClient({"bootstrap.servers": scenario.loopback.bootstrap})
    for name in ("east.orders", "local"):
        admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=30)
    spec = {
        "source": {"alias": "east", "bootstrapServers": "east-kafka.example:9092"},
        "target": {"alias": "west", "cluster": "events"},
        "topics": {"include": ["orders.*"]},
    }
    scenario.kubectl.apply(scenario.namespace, resource("MirrorMaker", "dr", spec))
    starting = scenario.wait_condition(
        lambda c: c["reason"] == "Starting", "MirrorMaker Starting", kind=MIRRORMAKERS, name="dr"
    )
    assert starting["message"] == "0 of 1 mirror processes ready"
    uid = scenario.get(MIRRORMAKERS, "dr")["metadata"]["uid"]
    deployment = scenario.get("deployment", "dr-mirror")
    assert [r["uid"] for r in deployment["metadata"]["ownerReferences"]] == [uid]
    assert scenario.get(MIRRORMAKERS, "dr")["status"]["mirroredTopics"] == ["east.orders"]
    selector = "app.kubernetes.io/instance=dr"
    wait_for(
        "the mirror pod",
        lambda: scenario.kubectl.items(scenario.namespace, "pods", selector),
        every=0.5,
    )
    kubelet.start_pods(scenario.namespace, selector, list(NODES))
    ready = scenario.wait_condition(
        lambda c: c["status"] == "True", "MirrorMaker Ready", kind=MIRRORMAKERS, name="dr"
    )
    assert ready["message"] == "1 mirror processes ready"


def test_a_namespace_whose_cluster_is_gone_is_deleted_without_waiting_on_topic_finalizers(
    kubectl: Kubectl, operator: None, brokers: ClusterFactory
) -> None:
    namespace = new_namespace(kubectl)
    loopback = brokers(1)
    cluster = resource("Cluster", "events", {"replicas": 1})
    topic = resource("Topic", "orders", {"cluster": "events", "replicas": 1})
    kubectl.apply(namespace, pointed_at(cluster, loopback), topic)
    wait_for(
        "the topic finalizer",
        lambda: (
            (kubectl.get(namespace, TOPICS, "orders") or {}).get("metadata", {}).get("finalizers")
        ),
        every=0.5,
    )
    kubectl.run("delete", "clusters.odradek.io", "events", "-n", namespace)
    kubectl.run("delete", "namespace", namespace, "--timeout=60s")
    assert "NotFound" in kubectl.run("get", "namespace", namespace, check=False)
