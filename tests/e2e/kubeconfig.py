"""kubeconfig files for one API server: as a user with a client certificate, or with a token."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml


def write_kubeconfig(
    path: Path,
    server: str,
    ca_cert: Path,
    *,
    user: str,
    client: tuple[Path, Path] | None = None,
    token: str | None = None,
) -> Path:
    """A one-context kubeconfig; ``client`` is (certificate, key)."""
    credentials: dict[str, Any] = {}
    if client is not None:
        credentials = {"client-certificate": str(client[0]), "client-key": str(client[1])}
    if token is not None:
        credentials["token"] = token
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca_cert)}}
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": user, "context": {"cluster": "e2e", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def token_kubeconfig(admin: Path, path: Path, user: str, token: str) -> Path:
    """The current cluster of the ``admin`` kubeconfig (any cluster), used with ``token``."""
    flat = subprocess.run(
        [
            "kubectl",
            "--kubeconfig",
            str(admin),
            "config",
            "view",
            "--raw",
            "--minify",
            "--flatten",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    config = json.loads(flat)
    config["users"] = [{"name": user, "user": {"token": token}}]
    [context] = config["contexts"]
    context["name"] = user
    context["context"] = {**context["context"], "user": user}
    config["current-context"] = user
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path
