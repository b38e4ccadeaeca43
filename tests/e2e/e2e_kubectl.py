"""A small kubectl wrapper for the end-to-end tests, with polling waits."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class Kubectl:
    """kubectl against one kubeconfig (the environment's KUBECONFIG when None)."""

    def __init__(self, kubeconfig: Path | None = None) -> None:
        self.kubeconfig = kubeconfig

    def _run(self, args: tuple[str, ...], stdin: str | None) -> subprocess.CompletedProcess[str]:
        config = ["--kubeconfig", str(self.kubeconfig)] if self.kubeconfig else []
        return subprocess.run(
            ["kubectl", *config, *args], input=stdin, capture_output=True, text=True, check=False
        )

    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        """stdout and stderr together (kubectl's refusals are on stderr)."""
        result = self._run(args, stdin)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout + result.stderr

    def json(self, *args: str) -> Any:
        """The parsed stdout of a command run with ``-o json``."""
        result = self._run((*args, "-o", "json"), None)
        if result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return json.loads(result.stdout)

    def apply(self, namespace: str, *docs: dict[str, Any], check: bool = True) -> str:
        """Server-side apply into ``namespace``; sent as JSON (kubectl's YAML reads "y" as true)."""
        items = [{**d, "metadata": {**d["metadata"], "namespace": namespace}} for d in docs]
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
        return self.run("apply", "--server-side", "-f", "-", stdin=text, check=check)

    def get(self, namespace: str, kind: str, name: str) -> dict[str, Any] | None:
        out = self._run(("get", "-n", namespace, kind, name, "-o", "json"), None)
        return dict(json.loads(out.stdout)) if out.returncode == 0 else None

    def items(self, namespace: str, kind: str, selector: str = "") -> list[dict[str, Any]]:
        found = self.json("get", "-n", namespace, kind, *(["-l", selector] if selector else []))
        return list(found["items"])

    def condition(self, namespace: str, kind: str, name: str, type_: str) -> dict[str, Any]:
        obj = self.get(namespace, kind, name) or {}
        for condition in obj.get("status", {}).get("conditions", []):
            if condition["type"] == type_:
                return dict(condition)
        return {}


def custom_resource(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """An odradek.io resource of ``kind``, to apply in a namespace."""
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def new_namespace(kubectl: Kubectl) -> str:
    """A namespace with a fresh name; the caller deletes it."""
    name = f"odradek-e2e-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", name)
    return name


def wait_for(
    what: str,
    probe: Callable[[], T | None],
    timeout: float = 300,
    every: float = 3,
    explain: Callable[[], str] | None = None,
) -> T:
    """Poll until ``probe`` returns something truthy; on a timeout the failure carries what
    ``explain`` reports (the state that kept the wait from ending)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(every)
    state = f"\n{explain()}" if explain else ""
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{state}")
