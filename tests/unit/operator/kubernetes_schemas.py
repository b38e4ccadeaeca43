"""Strict offline validation of built objects against the Kubernetes OpenAPI schemas."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

KUBERNETES_VERSIONS = ("1.30.0", "1.33.0")
PROMETHEUS_OPERATOR_GROUP = "monitoring.coreos.com/"


def assert_valid(obj: dict[str, Any]) -> None:
    """Fails on unknown fields too; Prometheus Operator kinds have no bundled schema."""
    if obj["apiVersion"].startswith(PROMETHEUS_OPERATOR_GROUP):
        assert obj["kind"] in {"ServiceMonitor", "PrometheusRule", "PodMonitor"}
        return
    for version in KUBERNETES_VERSIONS:
        kubernetes_validate.validate(obj, version, strict=True)
