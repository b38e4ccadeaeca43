"""The chart's custom resource definitions, as `helm template` renders them, installed
on an API server (the CRD tests need nothing else of the chart)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from e2e_kubectl import Kubectl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/unit/operator"))
from helm_binary import HOW, find_helm  # noqa: E402

RELEASE = "odradek"
NAMESPACE = "odradek"


def render_chart(kube_version: str, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    helm = find_helm()
    if helm is None:
        raise RuntimeError(HOW)
    chart = str(ROOT / "charts/odradek")
    out = subprocess.run(
        [helm, "template", RELEASE, chart, "-n", namespace, "--kube-version", kube_version],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def install_crds(kubectl: Kubectl) -> None:
    """The chart's CRDs, waited for until Established."""
    version = kubectl.json("version")["serverVersion"]["gitVersion"]
    crds = [o for o in render_chart(version) if o["kind"] == "CustomResourceDefinition"]
    kubectl.run(
        "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=yaml.safe_dump_all(crds)
    )
    for crd in crds:
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd['metadata']['name']}"
        )
