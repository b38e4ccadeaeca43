"""The chart's CRDs and RBAC installed for an operator that runs as a local process.

Everything `helm template` renders is applied except the operator's Deployment:
the tests run the operator themselves, with a token of the chart's ServiceAccount,
so it has exactly the permissions the chart grants.
"""

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
TOKEN_DURATION = "4h"


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


def install_without_operator(kubectl: Kubectl, namespace: str = NAMESPACE) -> str:
    """CRDs (waited for until Established), RBAC and the ServiceAccount, whose name it returns."""
    version = kubectl.json("version")["serverVersion"]["gitVersion"]
    rendered = render_chart(version, namespace)
    [deployment] = [o for o in rendered if o["kind"] == "Deployment"]
    objects = [o for o in rendered if o is not deployment]
    kubectl.run("create", "namespace", namespace, check=False)
    kubectl.run(
        "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=yaml.safe_dump_all(objects)
    )
    for crd in (o for o in objects if o["kind"] == "CustomResourceDefinition"):
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=60s", f"crd/{crd['metadata']['name']}"
        )
    return str(deployment["spec"]["template"]["spec"]["serviceAccountName"])


def service_account_token(kubectl: Kubectl, name: str, namespace: str = NAMESPACE) -> str:
    """A bound token of the ServiceAccount (TokenRequest API), as a pod would get."""
    result = kubectl.json("create", "token", name, "-n", namespace, f"--duration={TOKEN_DURATION}")
    return str(result["status"]["token"])
