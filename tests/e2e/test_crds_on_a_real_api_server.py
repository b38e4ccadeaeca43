"""The generated CRDs as a real API server sees them: structural, defaulted, CEL-checked."""

from __future__ import annotations

from typing import Any

import pytest
from e2e_kubectl import Kubectl, custom_resource

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("Topic", {"cluster": "c", "partitions": -1}, "should be greater than or equal to 1"),
        ("Cluster", {"storage": {"type": "tape"}}, 'Unsupported value: "tape"'),
        (
            "Cluster",
            {"replicas": 1, "config": {"min.insync.replicas": 2}},
            "min.insync.replicas cannot exceed replicas",
        ),
        (
            "MirrorMaker",
            {"source": {"alias": "a", "cluster": "x"}, "target": {"alias": "a", "cluster": "y"}},
            "source and target need different aliases",
        ),
    ],
)
def test_invalid_resources_are_rejected_with_the_schema_message(
    kubectl: Kubectl, crds: None, namespace: str, kind: str, spec: dict[str, Any], message: str
) -> None:
    out = kubectl.apply(namespace, custom_resource(kind, "bad", spec), check=False)
    assert message in out


def test_defaults_are_filled_in_by_the_api_server(
    kubectl: Kubectl, crds: None, namespace: str
) -> None:
    kubectl.apply(namespace, custom_resource("Topic", "orders", {"cluster": "events"}))
    topic = kubectl.get(namespace, "topics.odradek.io", "orders")
    assert topic is not None
    assert topic["spec"]["partitions"] == 1 and topic["spec"]["deletionPolicy"] == "Delete"


def test_custom_resources_are_listed_by_category_and_short_name(
    kubectl: Kubectl, crds: None, namespace: str
) -> None:
    kubectl.apply(namespace, custom_resource("Topic", "orders", {"cluster": "events"}))
    assert "orders" in kubectl.run("get", "-n", namespace, "odradek")
    assert "orders" in kubectl.run("get", "-n", namespace, "odt")
