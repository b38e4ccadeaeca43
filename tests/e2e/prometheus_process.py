"""A real Prometheus (Debian's package) scraping a real cluster as the Prometheus Operator
would from the Cluster's ServiceMonitor: each broker pod's ``http`` port at /metrics,
labelled with its namespace and pod; and the kubelets' /metrics (the volume statistics
the disk alert reads), with the admin client certificate. Debian builds Prometheus
without Kubernetes service discovery, so the targets are read from the API here, once,
and given as static targets. It evaluates the rule groups it is given."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from e2e_kubectl import Kubectl
from real_node import RealCluster
from real_pods import ROOT, helm

from odradek.cli.child_process import ChildProcess, free_port, http_status

READY_TIMEOUT_S = 60.0
SCRAPE_INTERVAL = "2s"
BROKER_SELECTOR = "app.kubernetes.io/component=broker"


def why_not() -> str | None:
    if shutil.which("prometheus") is None:
        return "needs Prometheus (apt-get install prometheus; scripts/setup.sh installs it)"
    return None


def chart_rule_groups(cluster: RealCluster, *values: str) -> list[dict[str, Any]]:
    """The rule groups of the chart's PrometheusRule, rendered by helm for the cluster's
    Kubernetes version, with ``values`` (key=value) set too."""
    version = cluster.kubectl.json("version")["serverVersion"]["gitVersion"]
    settings = [f"--set={value}" for value in ("metrics.prometheusRule.enabled=true", *values)]
    rendered = subprocess.run(
        [
            helm(), "template", "odradek", str(ROOT / "charts/odradek"), "--kube-version",
            version, *settings, "--show-only", "templates/prometheusrule.yaml",
        ],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    return list(yaml.safe_load(rendered)["spec"]["groups"])


def _broker_targets(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    targets = []
    for pod in kubectl.items(namespace, "pods", BROKER_SELECTOR):
        [port] = [
            port["containerPort"]
            for container in pod["spec"]["containers"]
            for port in container.get("ports", [])
            if port.get("name") == "http"
        ]
        labels = {"namespace": namespace, "pod": pod["metadata"]["name"]}
        targets.append({"targets": [f"{pod['status']['podIP']}:{port}"], "labels": labels})
    return targets


def _kubelet_targets(kubectl: Kubectl) -> list[dict[str, Any]]:
    targets = []
    for node in kubectl.json("get", "nodes")["items"]:
        [address] = [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"]
        port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        labels = {"node": node["metadata"]["name"]}
        targets.append({"targets": [f"{address}:{port}"], "labels": labels})
    return targets


def _config(kubectl: Kubectl, pki: tuple[Path, Path], rules: Path, namespace: str) -> str:
    brokers = {"job_name": "brokers", "static_configs": _broker_targets(kubectl, namespace)}
    kubelets = {
        "job_name": "kubelets",
        "scheme": "https",
        # the kubelets serve a self-signed certificate; the client certificate is checked
        "tls_config": {
            "cert_file": str(pki[0]), "key_file": str(pki[1]), "insecure_skip_verify": True
        },
        "static_configs": _kubelet_targets(kubectl),
    }  # fmt: skip
    return yaml.safe_dump(
        {
            "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
            "rule_files": [str(rules)],
            "scrape_configs": [brokers, kubelets],
        }
    )


class Prometheus:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    def api(self, path: str, **params: str) -> Any:
        """The ``data`` of a successful answer from /api/v1/<path>."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=10) as answer:
            body = json.load(answer)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's vector."""
        return list(self.api("query", query=expr)["result"])


@contextlib.contextmanager
def running_prometheus(
    workdir: Path,
    kubectl: Kubectl,
    client_pki: tuple[Path, Path],
    rule_groups: list[dict[str, Any]],
    namespace: str,
) -> Iterator[Prometheus]:
    """Prometheus on a free loopback port, its data under ``workdir``; stopped on exit."""
    workdir.mkdir(parents=True, exist_ok=True)
    rules = workdir / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": rule_groups}))
    config = workdir / "prometheus.yml"
    config.write_text(_config(kubectl, client_pki, rules, namespace))
    port = free_port()
    process = ChildProcess(
        "prometheus",
        [
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn",
        ],
        workdir / "prometheus.log",
    )  # fmt: skip
    process.start()
    try:
        process.wait_ready(
            lambda: http_status(f"http://127.0.0.1:{port}/-/ready") == 200, READY_TIMEOUT_S
        )
        yield Prometheus(port)
    finally:
        process.stop()
