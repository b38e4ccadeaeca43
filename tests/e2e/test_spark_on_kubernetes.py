"""The Spark job image's entrypoint under Spark's own Kubernetes backend (issue 9).

The driver starts through images/spark/entrypoint.sh ``driver``, as in a driver pod,
with master ``k8s://`` the session's kube-apiserver. Spark's backend creates the
executor pods through the API, and spark_pods.py plays their kubelet: it runs each
pod's container through the same entrypoint with the args and environment Spark put
in the pod spec. The activity-tracking pipeline then reads its topic on those
executors, and its Parquet output must equal counts computed in Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from broker_process import Broker
from e2e_kubectl import Kubectl
from kubelet_stand_in import KubeletStandIn
from spark_pods import ENTRYPOINT, ExecutorPods
from spark_support import (
    START_MS,
    close_windows,
    demo,
    expected_page_views,
    new_topic,
    parquet_page_views,
)

from odradek.spark.pipelines import activity_tracking
from odradek.spark.session import spark_home_without_zip

pytestmark = pytest.mark.slow

PARTITIONS = 3
DRIVER_TIMEOUT_S = 300.0


def image_environment() -> dict[str, str]:
    """What images/spark/Dockerfile's ENV gives every container, for this machine."""
    java = shutil.which("java")
    assert java, "java is not installed: run scripts/setup.sh"
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "SPARK_HOME": str(spark_home_without_zip()),
        "JAVA_HOME": str(Path(java).resolve().parents[1]),
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONUNBUFFERED": "1",
    }


def api_server(kubectl: Kubectl) -> str:
    assert kubectl.kubeconfig is not None
    config = yaml.safe_load(kubectl.kubeconfig.read_text())
    return str(config["clusters"][0]["cluster"]["server"])


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = Broker(tmp_path / "broker").start()
    try:
        yield broker
    finally:
        broker.close()


def test_pipeline_runs_on_executor_pods_started_by_sparks_kubernetes_backend(
    kubectl: Kubectl, kubelet: KubeletStandIn, namespace: str, broker: Broker, tmp_path: Path
) -> None:
    source, results = new_topic(broker.bootstrap, PARTITIONS), new_topic(broker.bootstrap, 1)
    demo(broker.bootstrap, "clickstream", source, 600, seed=4, start_ms=START_MS)
    sentinel = close_windows(broker.bootstrap, source)
    assert kubectl.kubeconfig is not None
    image_env = image_environment()
    env = {
        **image_env,
        "KUBECONFIG": str(kubectl.kubeconfig),
        "SPARK_DRIVER_BIND_ADDRESS": "127.0.0.1",  # the driver pod's IP
    }
    driver_argv = [
        str(ENTRYPOINT),
        "driver",
        "--master",
        f"k8s://{api_server(kubectl)}",
        "--name",
        "activity-tracking",
        "--conf",
        f"spark.kubernetes.namespace={namespace}",
        "--conf",
        "spark.kubernetes.container.image=ghcr.io/odradek/spark:0.1.0",
        "--conf",
        "spark.driver.host=127.0.0.1",
        "--conf",
        "spark.executor.instances=1",
        "--conf",
        "spark.executor.cores=2",
        "--conf",
        "spark.executor.memory=512m",
        activity_tracking.__file__,
        "--bootstrap-servers",
        broker.bootstrap,
        "--source-topic",
        source,
        "--results-topic",
        results,
        "--checkpoint-dir",
        str(tmp_path / "checkpoints"),
        "--parquet-path",
        str(tmp_path / "parquet"),
        "--available-now",
    ]
    executors = ExecutorPods(kubelet, namespace, image_env, tmp_path)
    driver_log = tmp_path / "driver.log"
    with executors.running(), driver_log.open("wb") as out:
        driver = subprocess.Popen(
            driver_argv,
            env=env,
            cwd=tmp_path,  # the pod's working dir: Spark copies spark.jars there
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = driver.wait(DRIVER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if driver.poll() is None:
                os.killpg(driver.pid, 9)
                driver.wait()
    assert code == 0, f"driver exited {code}:\n{driver_log.read_text()[-6000:]}"

    assert executors.containers, "Spark created no executor pod"
    [executor] = executors.containers.values()
    executor_log = executor.log.read_text()
    assert "Finished task" in executor_log, executor_log[-4000:]
    expected = expected_page_views(broker.bootstrap, source, PARTITIONS, leave_out=sentinel)
    assert parquet_page_views(tmp_path / "parquet") == expected
