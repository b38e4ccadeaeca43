"""kubeconfig files for one API server, as a user with a client certificate."""

from __future__ import annotations

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
