"""The operator as a local process (`kopf run`), logged in with a ServiceAccount's token."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from odradek.cli.child_process import ChildProcess, free_port, http_status
from odradek.operator.constants import OUT_OF_CLUSTER_ENV

READY_TIMEOUT_S = 60.0
RESYNC_SECONDS = 2.0
"""Shorter than the default 10 s: readiness, rolling and draining are resync work."""


@contextlib.contextmanager
def running_operator(kubeconfig: Path, log_path: Path) -> Iterator[ChildProcess]:
    """Started and serving /metrics (its startup handler ran); always stopped afterwards."""
    metrics_port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("KUBERNETES_")  # never the in-cluster config
    }
    env |= {
        "KUBECONFIG": str(kubeconfig),
        "ODRADEK_OPERATOR_METRICS_PORT": str(metrics_port),
        "ODRADEK_OPERATOR_METRICS_ADDRESS": "127.0.0.1",
        OUT_OF_CLUSTER_ENV: "1",
        "ODRADEK_OPERATOR_RESYNC_SECONDS": str(RESYNC_SECONDS),
    }
    argv = [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces"]
    process = ChildProcess("operator", [*argv, "-m", "odradek.operator.main"], log_path, env)
    process.start()
    try:
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        process.wait_ready(lambda: http_status(url) == 200, READY_TIMEOUT_S)
        yield process
    finally:
        process.stop()
