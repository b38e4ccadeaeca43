"""Spark on real pods: spark-submit in cluster mode from the host starts the driver pod
from the Spark image; Spark's Kubernetes backend starts an executor pod from it; the
activity-tracking pipeline reads a topic of the example Cluster through format
``odradek`` on the executor and writes its counts to another topic, which must hold
what Python counts from the source topic.

The Spark image (1.2 GB) goes into one node's containerd only, and the Spark pods are
pinned to that node's zone.
"""

from __future__ import annotations

import collections
import datetime
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from broker_process import odradek_command
from e2e_kubectl import Kubectl, wait_for
from node_tools import project_image
from real_node import RealCluster
from real_pods import BOOTSTRAP, NAMESPACE, create_topic, run_client
from spark_support import START_MS, closing_page_view, count_page_views

from odradek.spark.session import spark_home_without_zip

# the image goes into a node, then a driver and an executor JVM start on a busy machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SOURCE, RESULTS = "page-views", "page-view-counts"
PARTITIONS = 3
APP = "activity-tracking"
DRIVER_POD = f"{APP}-driver"
SERVICE_ACCOUNT = "spark"
PIPELINE = "local:///opt/odradek-package/odradek/spark/pipelines/activity_tracking.py"
SUBMIT_TIMEOUT_S = 120
DRIVER_TIMEOUT_S = 480
WORK_DIR = "/opt/spark/work-dir"


def driver_rbac() -> list[dict[str, Any]]:
    """What Spark's driver needs to run its executors: a service account that may manage
    pods, services, config maps and claims in the namespace."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "metadata": {"name": SERVICE_ACCOUNT}}
    resources = ["pods", "services", "configmaps", "persistentvolumeclaims"]
    subject = {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT}},
        {
            **role,
            "kind": "Role",
            "rules": [{"apiGroups": [""], "resources": resources, "verbs": ["*"]}],
        },
        {
            **role,
            "kind": "RoleBinding",
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": SERVICE_ACCOUNT,
            },
            "subjects": [subject],
        },
    ]


def pod_template() -> dict[str, Any]:
    """Spark's driver and executor pods under the broker's rules: uid 1000, a read-only
    root filesystem, writes only to volumes: emptyDirs on /tmp (the JVM's and Python's
    temporary files) and the working directory (the job's checkpoints); Spark's backend
    adds its own for spark.local.dir and, on the driver, its config."""
    volumes = {"tmp": "/tmp", "work-dir": WORK_DIR}
    container = {
        "name": "spark",
        "securityContext": {
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": name, "mountPath": path} for name, path in volumes.items()],
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000},
            "containers": [container],
            "volumes": [{"name": name, "emptyDir": {}} for name in volumes],
        },
    }


def runs_as_the_broker_does(pod: dict[str, Any]) -> bool:
    [container] = pod["spec"]["containers"]
    return (
        pod["spec"]["securityContext"]["runAsUser"] == 1000
        and container["securityContext"]["readOnlyRootFilesystem"] is True
        and {m["mountPath"] for m in container["volumeMounts"]} >= {"/tmp", WORK_DIR}
    )


def spark_submit(cluster: RealCluster, image: str, zone: str, template: Path) -> list[str]:
    conf = {
        "spark.kubernetes.namespace": NAMESPACE,
        "spark.kubernetes.container.image": image,
        "spark.kubernetes.container.image.pullPolicy": "Never",
        "spark.kubernetes.authenticate.driver.serviceAccountName": SERVICE_ACCOUNT,
        "spark.kubernetes.driver.pod.name": DRIVER_POD,
        # the image's Python: spark-submit would pass on this host's PYSPARK_PYTHON
        "spark.pyspark.python": "python3",
        "spark.pyspark.driver.python": "python3",
        "spark.kubernetes.node.selector.topology.kubernetes.io/zone": zone,
        "spark.kubernetes.executor.deleteOnTermination": "false",  # its log is checked
        "spark.kubernetes.submission.waitAppCompletion": "false",  # the test waits
        "spark.kubernetes.driver.request.cores": "100m",
        "spark.kubernetes.executor.request.cores": "100m",
        "spark.driver.memory": "512m",
        "spark.executor.memory": "512m",
        "spark.executor.instances": "1",
        "spark.executor.cores": "2",
        "spark.kubernetes.driver.podTemplateFile": str(template),
        "spark.kubernetes.executor.podTemplateFile": str(template),
    }
    argv = [
        str(spark_home_without_zip() / "bin/spark-submit"),
        "--master", f"k8s://{cluster.plane.server}", "--deploy-mode", "cluster", "--name", APP,
    ]  # fmt: skip
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    return [
        *argv, PIPELINE, "--bootstrap-servers", BOOTSTRAP, "--source-topic", SOURCE,
        "--results-topic", RESULTS, "--checkpoint-dir", f"{WORK_DIR}/checkpoints",
        "--available-now",
    ]  # fmt: skip


def finished(kubectl: Kubectl) -> dict[str, Any] | None:
    """The driver pod, once it has succeeded or failed."""
    pod = kubectl.get(NAMESPACE, "pod", DRIVER_POD)
    phase = (pod or {}).get("status", {}).get("phase")
    return pod if phase in ("Succeeded", "Failed") else None


def topic_values(cluster: RealCluster, topic: str) -> list[bytes]:
    out = run_client(cluster, "kcat", "-b", BOOTSTRAP, "-C", "-t", topic, "-e", "-q", "-f", "%s\n")
    return [line.encode() for line in out.splitlines() if line]


def published_counts(values: list[bytes]) -> collections.Counter[tuple[datetime.datetime, str]]:
    """Views per (window, page) in the pipeline's results topic (JSON, times in UTC)."""
    counts: collections.Counter[tuple[datetime.datetime, str]] = collections.Counter()
    for value in values:
        row = json.loads(value)
        start = datetime.datetime.fromisoformat(row["window_start"])
        counts[(start.astimezone(datetime.UTC).replace(tzinfo=None), row["page"])] += row["views"]
    return counts


def test_a_spark_job_on_driver_and_executor_pods_reads_a_topic_with_format_odradek(
    real_cluster: RealCluster, events: str, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    node = real_cluster.nodes[0]
    image = project_image("spark")
    node.containerd.import_image(image)
    create_topic(real_cluster, SOURCE, PARTITIONS)
    create_topic(real_cluster, RESULTS, 1)
    run_client(
        real_cluster, *odradek_command(), "demo", "clickstream", SOURCE, "--count", "600",
        "--rate", "5", "--seed", "4", "--start-time", str(START_MS), "--as-fast-as-possible",
        "--bootstrap-server", BOOTSTRAP, "--quiet",
    )  # fmt: skip
    sentinel = closing_page_view()
    run_client(
        real_cluster, "sh", "-c", 'printf "%s|%s" "$0" "$1" | kcat -b "$2" -P -t "$3" -K "|"',
        sentinel.key().decode(), sentinel.encode().decode(), BOOTSTRAP, SOURCE,
    )  # fmt: skip
    kubectl.apply(NAMESPACE, *driver_rbac())
    host_only = ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")  # set by earlier Spark tests
    inherited = {k: v for k, v in os.environ.items() if k not in host_only}
    environment = {**inherited, "KUBECONFIG": str(real_cluster.plane.kubeconfig)}
    template = tmp_path / "spark-pod.yaml"
    template.write_text(json.dumps(pod_template()))  # JSON is YAML
    try:
        submitted = subprocess.run(
            spark_submit(real_cluster, image, node.zone, template),
            env=environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=SUBMIT_TIMEOUT_S,
        )
        assert submitted.returncode == 0, submitted.stderr[-3000:]
        driver_log = functools.partial(
            kubectl.run, "logs", "-n", NAMESPACE, DRIVER_POD, "--tail", "80", check=False
        )
        driver = wait_for(
            "the Spark driver pod to finish",
            functools.partial(finished, kubectl),
            DRIVER_TIMEOUT_S,
            2,
            lambda: f"{real_cluster.report()}\n--- driver log ---\n{driver_log()}",
        )
        phase = driver["status"]["phase"]
        assert phase == "Succeeded", f"the driver pod {phase}:\n{driver_log()}"
        assert driver["spec"]["nodeName"] == node.name
        assert runs_as_the_broker_does(driver)
        executors = kubectl.items(NAMESPACE, "pods", "spark-role=executor")
        assert executors, "Spark started no executor pod"
        for executor in executors:
            assert executor["spec"]["nodeName"] == node.name
            assert executor["spec"]["containers"][0]["image"] == image
            assert runs_as_the_broker_does(executor)
            name = executor["metadata"]["name"]
            log = kubectl.run("logs", "-n", NAMESPACE, name, check=False)
            assert "Finished task" in log, log[-4000:]

        expected = count_page_views(topic_values(real_cluster, SOURCE), sentinel)
        assert len({window for window, _ in expected}) == 3  # 120 s of event time from hh:13:20
        assert published_counts(topic_values(real_cluster, RESULTS)) == expected
    finally:
        kubectl.run(
            "delete", "pods", "-n", NAMESPACE, "-l", "spark-role", "--wait=false", check=False
        )
        for doc in driver_rbac():
            kubectl.run(
                "delete", doc["kind"], doc["metadata"]["name"], "-n", NAMESPACE, check=False
            )
