"""Find a helm binary for the chart tests, or say how to get one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CACHED = Path.home() / ".cache/odradek/bin/helm"
HOW = (
    "no helm binary: set HELM, put helm on PATH, or build it with "
    "`GOPATH=~/.cache/odradek/go GOBIN=~/.cache/odradek/bin "
    "go install helm.sh/helm/v3/cmd/helm@v3.16.2`"
)


def find_helm() -> str | None:
    for candidate in (os.environ.get("HELM"), str(CACHED), shutil.which("helm")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None
