"""Custom-resource bodies and a context wired to the in-memory fakes."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import kopf
from operator_fakes import MemoryKafka, MemoryKube

from odradek.operator.handlers.context import Context

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LOGGER = logging.getLogger("test")


def resource(kind: str, name: str, spec: dict[str, Any], generation: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": "prod",
            "uid": f"uid-{name}",
            "generation": generation,
        },
        "spec": spec,
    }


class World:
    """The API server and the Kafka cluster one test runs the handlers against."""

    def __init__(self, brokers: int = 3) -> None:
        self.kube = MemoryKube()
        self.kafka = MemoryKafka(brokers=set(range(brokers)))
        self.context = Context(kube=self.kube, admin=self.kafka, now=lambda: NOW)
        self.memo = kopf.Memo(context=self.context)

    def body(self, kind: str, name: str) -> kopf.Body:
        found = self.kube.get("odradek.io/v1alpha1", kind, name, "prod")
        assert found is not None
        return kopf.Body(found)

    def status(self, kind: str, name: str) -> dict[str, Any]:
        return dict(self.body(kind, name)["status"])

    def condition(self, kind: str, name: str, type_: str = "Ready") -> dict[str, Any]:
        [found] = [c for c in self.status(kind, name)["conditions"] if c["type"] == type_]
        return dict(found)

    def get(self, kind: str, name: str, api_version: str = "v1") -> dict[str, Any]:
        found = self.kube.get(api_version, kind, name, "prod")
        assert found is not None, f"{kind} {name} missing"
        return found
