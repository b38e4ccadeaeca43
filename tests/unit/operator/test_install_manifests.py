from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_offline_validation import validate_resource
from kubernetes_schemas import assert_valid

ROOT = Path(__file__).resolve().parents[3]
FILES = sorted((ROOT / "manifests").rglob("*.yaml"))


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_manifest_validates(path: Path) -> None:
    for doc in documents(path):
        if doc["apiVersion"].startswith("odradek.io/"):
            validate_resource(doc)
        elif doc["apiVersion"].startswith("sparkoperator.k8s.io/"):
            assert_spark_application(doc)
        else:
            assert_valid(doc)


def assert_spark_application(doc: dict[str, Any]) -> None:
    """The fields kubeflow spark-operator's v1beta2 SparkApplication requires (no schema
    for its CRD ships with kubernetes-validate)."""
    assert doc["apiVersion"] == "sparkoperator.k8s.io/v1beta2"
    assert doc["kind"] == "SparkApplication"
    spec = doc["spec"]
    assert spec["type"] in {"Java", "Scala", "Python", "R"}
    assert spec["mode"] in {"cluster", "client"}
    for field in ("image", "mainApplicationFile", "sparkVersion", "driver", "executor"):
        assert spec.get(field), f"SparkApplication {doc['metadata']['name']} lacks spec.{field}"


def test_examples_cover_every_custom_resource() -> None:
    kinds = {d["kind"] for p in FILES if "examples" in p.parts for d in documents(p)}
    assert kinds == {"Cluster", "Topic", "MirrorMaker"}


def test_example_topics_point_at_example_clusters() -> None:
    docs = [d for p in FILES if "examples" in p.parts for d in documents(p)]
    clusters = {
        (d["metadata"]["namespace"], d["metadata"]["name"]) for d in docs if d["kind"] == "Cluster"
    }
    for topic in (d for d in docs if d["kind"] == "Topic"):
        assert (topic["metadata"]["namespace"], topic["spec"]["cluster"]) in clusters
