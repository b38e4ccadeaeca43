"""The kubelet's part for Spark's executor pods: run each pod's container on this machine.

The session's control plane has no kubelets. Spark's driver creates executor pods
through the API; this stand-in binds each to a node, marks it Running and starts
its container the way a kubelet would start the job image: the image's entrypoint
with the pod's args and environment (fieldRefs resolved for a pod whose IP is
127.0.0.1, emptyDir mounts as temporary folders) plus the image's own ENV. A pod
being deleted has its container stopped and its deletion completed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubelet_stand_in import KubeletStandIn

ROOT = Path(__file__).resolve().parents[2]
ENTRYPOINT = ROOT / "images" / "spark" / "entrypoint.sh"
POD_IP = "127.0.0.1"
NODE = "spark-node"
STOP_TIMEOUT_S = 20.0


@dataclass
class Container:
    pod: str
    process: subprocess.Popen[bytes]
    log: Path


def container_environment(
    pod: dict[str, Any], container: dict[str, Any], mounts: Mapping[str, Path]
) -> dict[str, str]:
    """The container's environment as the kubelet would set it."""
    fields = {
        "status.podIP": POD_IP,
        "metadata.name": pod["metadata"]["name"],
        "metadata.namespace": pod["metadata"]["namespace"],
    }
    env = {}
    for item in container.get("env", []):
        if "value" in item:
            value = item["value"]
        else:
            value = fields[item["valueFrom"]["fieldRef"]["fieldPath"]]
        for mount_path, folder in mounts.items():
            value = value.replace(mount_path, str(folder))
        env[item["name"]] = value
    return env


class ExecutorPods:
    """Runs the executor pods of one namespace while the block runs; see the module doc."""

    def __init__(
        self, kubelet: KubeletStandIn, namespace: str, image_env: Mapping[str, str], workdir: Path
    ) -> None:
        self.kubelet = kubelet
        self.namespace = namespace
        self.image_env = dict(image_env)
        self.workdir = workdir
        self.containers: dict[str, Container] = {}
        self._stop = threading.Event()
        self._failure: BaseException | None = None

    def _serve(self) -> None:
        try:
            while not self._stop.wait(0.3):
                for pod in self.kubelet.pods(self.namespace, "spark-role=executor"):
                    name = pod["metadata"]["name"]
                    if pod["metadata"].get("deletionTimestamp"):
                        self._stop_container(name)
                        self.kubelet.finish_deletions(self.namespace, "spark-role=executor")
                    elif name not in self.containers:
                        self._start(pod)
        except BaseException as error:  # reported by the block's exit
            self._failure = error

    def _start(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        self.kubelet.bind(self.namespace, name, NODE)
        self.kubelet.mark_ready(self.namespace, name)
        [container] = pod["spec"]["containers"]
        volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
        mounts = {
            m["mountPath"]: Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.workdir))
            for m in container.get("volumeMounts", [])
            if "emptyDir" in volumes.get(m["name"], {})
        }
        env = {**self.image_env, **container_environment(pod, container, mounts)}
        log = self.workdir / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(ENTRYPOINT), *container.get("args", [])],
                env=env,
                cwd=self.workdir,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.containers[name] = Container(name, process, log)

    def _stop_container(self, name: str) -> None:
        container = self.containers.get(name)
        if container is None or container.process.poll() is not None:
            return
        os.killpg(container.process.pid, signal.SIGTERM)
        try:
            container.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(container.process.pid, signal.SIGKILL)
            container.process.wait()

    @contextmanager
    def running(self) -> Iterator[ExecutorPods]:
        self.kubelet.register_node(NODE, "zone-a")
        thread = threading.Thread(target=self._serve, name="executor-pods", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(30)
            for name in list(self.containers):
                self._stop_container(name)
        if self._failure is not None:
            raise self._failure
