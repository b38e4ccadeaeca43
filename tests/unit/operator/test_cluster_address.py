from __future__ import annotations

from typing import Any

from odradek.operator.constants import ADMIN_BOOTSTRAP_ANNOTATION
from odradek.operator.handlers.cluster_address import admin_bootstrap

OVERRIDE = {ADMIN_BOOTSTRAP_ANNOTATION: "127.0.0.1:9092"}


def cluster(annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": "events", "namespace": "prod", "annotations": annotations},
        "spec": {"listeners": [{"name": "PLAINTEXT", "port": 9093}]},
    }


def test_brokers_are_reached_through_the_bootstrap_service_on_the_first_listener() -> None:
    assert admin_bootstrap(cluster({}), out_of_cluster=True) == "events-bootstrap.prod.svc:9093"


def test_the_override_annotation_is_ignored_by_an_operator_inside_the_cluster() -> None:
    assert admin_bootstrap(cluster(OVERRIDE), out_of_cluster=False) == (
        "events-bootstrap.prod.svc:9093"
    )


def test_an_operator_outside_the_cluster_follows_the_override_annotation() -> None:
    assert admin_bootstrap(cluster(OVERRIDE), out_of_cluster=True) == "127.0.0.1:9092"
