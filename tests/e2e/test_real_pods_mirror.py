"""MirrorMaker on real pods: a second Cluster, and a MirrorMaker resource whose mirror
pods copy a topic of the example Cluster into it, records that were there before it
started and records written while it runs."""

from __future__ import annotations

import functools
import subprocess
from typing import Any

import pytest
from e2e_kubectl import wait_for
from real_node import RealCluster
from real_pods import (
    CLUSTER,
    NAMESPACE,
    create_topic,
    produce_keyed,
    small_cluster,
    wait_ready,
)

pytestmark = pytest.mark.slow

TARGET = "west"
TARGET_BOOTSTRAP = f"{TARGET}-bootstrap.{NAMESPACE}.svc:9092"
TOPIC = "mirrored"
MIRRORED = f"{CLUSTER}.{TOPIC}"  # naming: prefix
MIRROR_TIMEOUT_S = 180


def mirror_maker() -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": "MirrorMaker",
        "metadata": {"name": f"{CLUSTER}-to-{TARGET}"},
        "spec": {
            "source": {"alias": CLUSTER, "cluster": CLUSTER},
            "target": {"alias": TARGET, "cluster": TARGET},
            "topics": {"include": [TOPIC]},
            "naming": "prefix",
            "replicas": 1,
        },
    }


def mirrored(cluster: RealCluster, expected: int) -> list[str] | None:
    """The records in the target's copy, once there are ``expected`` of them."""
    command = [
        "kcat", "-b", TARGET_BOOTSTRAP, "-C", "-t", MIRRORED, "-o", "beginning", "-e",
        "-f", "%k:%s\n", "-m", "10",
    ]  # fmt: skip
    result = subprocess.run(
        cluster.client_argv(command), capture_output=True, text=True, check=False, timeout=60
    )
    records = result.stdout.split()
    return records if len(records) >= expected else None


def test_a_mirrormaker_copies_a_topic_between_two_clusters_on_pods(
    real_cluster: RealCluster, events: str
) -> None:
    kubectl = real_cluster.kubectl
    create_topic(real_cluster, TOPIC, 3)
    before = produce_keyed(real_cluster, TOPIC, 0, 200)
    resource = mirror_maker()
    name = resource["metadata"]["name"]
    try:
        kubectl.apply(NAMESPACE, small_cluster(TARGET))
        wait_ready(real_cluster, "cluster", TARGET)
        kubectl.apply(NAMESPACE, resource)
        wait_ready(real_cluster, "mirrormaker", name)

        pods = kubectl.items(NAMESPACE, "pods", f"app.kubernetes.io/instance={name}")
        assert len(pods) == 1 and pods[0]["status"]["phase"] == "Running"
        # the garbage collector removes the mirror's Deployment with the MirrorMaker
        owner = kubectl.get(NAMESPACE, "mirrormaker", name)
        deployment = kubectl.get(NAMESPACE, "deployment", f"{name}-mirror")
        assert owner is not None and deployment is not None
        [reference] = deployment["metadata"]["ownerReferences"]
        assert reference["kind"] == "MirrorMaker" and reference["name"] == name
        assert reference["uid"] == owner["metadata"]["uid"] and reference["controller"]
        after = produce_keyed(real_cluster, TOPIC, 200, 100)
        copy = functools.partial(mirrored, real_cluster, len(before) + len(after))
        records = wait_for(
            f"{MIRRORED} in {TARGET}", copy, MIRROR_TIMEOUT_S, 2, real_cluster.report
        )
        assert sorted(records) == sorted(before + after)
        found = kubectl.get(NAMESPACE, "mirrormaker", name)
        assert found is not None and found["status"]["mirroredTopics"] == [MIRRORED]
    finally:  # the rolling and scaling tests run without them
        kubectl.run("delete", "mirrormaker", name, "-n", NAMESPACE, "--wait=false")
        kubectl.run("delete", "cluster", TARGET, "-n", NAMESPACE, "--wait=false")
