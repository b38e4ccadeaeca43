from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from odradek.operator.crdgen.__main__ import main
from odradek.operator.crdgen.definitions import RESOURCES, crd
from odradek.operator.crdgen.render import rendered_files

ROOT = Path(__file__).resolve().parents[3]
KUBERNETES = "1.30.0"


def test_generated_crds_and_chart_templates_match_the_models() -> None:
    stale = [p for p, text in rendered_files().items() if (ROOT / p).read_text() != text]
    assert not stale, f"regenerate with `python3 -m odradek.operator.crdgen`: {stale}"


def test_check_mode_reports_drift_without_writing(tmp_path: Path) -> None:
    assert main(["--root", str(tmp_path), "--check"]) == 1
    assert not (tmp_path / "crds").exists()
    assert main(["--root", str(tmp_path)]) == 0
    assert main(["--root", str(tmp_path), "--check"]) == 0


@pytest.mark.parametrize("resource", RESOURCES, ids=lambda r: r.kind)
def test_crd_is_a_valid_kubernetes_object(resource: Any) -> None:
    kubernetes_validate.validate(crd(resource), KUBERNETES, strict=True)


def _walk(schema: dict[str, Any], path: str) -> list[str]:
    problems = []
    free = schema.get("x-kubernetes-preserve-unknown-fields") or schema.get(
        "x-kubernetes-int-or-string"
    )
    if "type" not in schema and not free:
        problems.append(f"{path}: no type")
    if "properties" in schema and "additionalProperties" in schema:
        problems.append(f"{path}: properties and additionalProperties")
    for keyword in ("anyOf", "oneOf", "allOf", "$ref", "nullable"):
        if keyword in schema:
            problems.append(f"{path}: {keyword}")
    for name, sub in schema.get("properties", {}).items():
        problems += _walk(sub, f"{path}.{name}")
    for keyword in ("items", "additionalProperties"):
        if isinstance(schema.get(keyword), dict):
            problems += _walk(schema[keyword], f"{path}[{keyword}]")
    return problems


@pytest.mark.parametrize("resource", RESOURCES, ids=lambda r: r.kind)
def test_schema_is_structural(resource: Any) -> None:
    schema = crd(resource)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert _walk(schema, "") == []


def test_cluster_scale_subresource_targets_spec_replicas() -> None:
    cluster = yaml.safe_load((ROOT / "crds/clusters.yaml").read_text())
    version = cluster["spec"]["versions"][0]
    assert version["subresources"]["scale"]["specReplicasPath"] == ".spec.replicas"
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
    assert {"replicas", "selector", "observedGeneration", "conditions"} <= set(status)


def test_chart_crds_are_kept_on_uninstall_and_switchable() -> None:
    text = (ROOT / "charts/odradek/templates/crds/topics.yaml").read_text()
    assert "helm.sh/resource-policy: keep" in text
    assert text.splitlines()[1] == "{{- if .Values.crds.install }}"
