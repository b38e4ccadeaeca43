"""A small kubectl wrapper for the end-to-end tests, with polling waits."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


class Kubectl:
    def run(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        result = subprocess.run(
            ["kubectl", *args], input=stdin, capture_output=True, text=True, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
        return result.stdout + result.stderr

    def apply(self, namespace: str, *docs: dict[str, Any], check: bool = True) -> str:
        text = yaml.safe_dump_all(
            [{**d, "metadata": {**d["metadata"], "namespace": namespace}} for d in docs]
        )
        return self.run("apply", "--server-side", "-f", "-", stdin=text, check=check)

    def get(self, namespace: str, kind: str, name: str) -> dict[str, Any] | None:
        out = subprocess.run(
            ["kubectl", "get", "-n", namespace, kind, name, "-o", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        return json.loads(out.stdout) if out.returncode == 0 else None

    def condition(self, namespace: str, kind: str, name: str, type_: str) -> dict[str, Any]:
        obj = self.get(namespace, kind, name) or {}
        for condition in obj.get("status", {}).get("conditions", []):
            if condition["type"] == type_:
                return dict(condition)
        return {}


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 300, every: float = 3) -> T:
    """Poll until ``probe`` returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
