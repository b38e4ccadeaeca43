"""In-memory stand-ins for the API server and a Kafka cluster, behind the operator's Protocols.

They keep state the way the real systems do for the calls the operator makes,
so handler tests can run passes one after another. The real API server is
exercised in tests/e2e (issue 7); a real broker once it exists.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from odradek.operator.handlers.kafka_admin import ClusterMetadata, KafkaAdminError
from odradek.operator.planning.partitions import Partition
from odradek.operator.planning.topic_changes import ObservedTopic

Obj = dict[str, Any]
Key = tuple[str, str, str | None, str]


class MemoryKube:
    def __init__(self) -> None:
        self.objects: dict[Key, Obj] = {}
        self.deleted: list[tuple[str, str, int | None]] = []
        self.events: list[tuple[str, str, str]] = []

    @staticmethod
    def key(obj: Obj) -> Key:
        meta = obj["metadata"]
        return (obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])

    def add(self, obj: Obj) -> Obj:
        obj = copy.deepcopy(obj)
        obj["metadata"].setdefault("uid", str(uuid.uuid4()))
        self.objects[self.key(obj)] = obj
        return obj

    def apply(self, obj: Obj) -> None:
        existing = self.objects.get(self.key(obj))
        applied = self.add(obj)
        if existing is not None:
            applied["metadata"]["uid"] = existing["metadata"]["uid"]
            if "status" in existing:
                applied["status"] = existing["status"]

    def get(
        self, api_version: str, kind: str, name: str, namespace: str | None = None
    ) -> Obj | None:
        found = self.objects.get((api_version, kind, namespace, name))
        return copy.deepcopy(found) if found else None

    def list(
        self, api_version: str, kind: str, namespace: str | None, labels: dict[str, str]
    ) -> list[Obj]:
        return [
            copy.deepcopy(o)
            for (v, k, ns, _), o in sorted(self.objects.items(), key=lambda kv: str(kv[0]))
            if v == api_version
            and k == kind
            and (namespace is None or ns == namespace)
            and labels.items() <= o["metadata"].get("labels", {}).items()
        ]

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        grace_seconds: int | None = None,
    ) -> None:
        if self.objects.pop((api_version, kind, namespace, name), None) is not None:
            self.deleted.append((kind, name, grace_seconds))

    def patch_status(
        self, api_version: str, kind: str, name: str, namespace: str, status: Obj
    ) -> None:
        self.objects[(api_version, kind, namespace, name)]["status"] = copy.deepcopy(status)

    def event(self, involved: Obj, type_: str, reason: str, message: str) -> None:
        self.events.append((type_, reason, message))


@dataclass
class Topic:
    id: str
    replicas: list[tuple[int, ...]]
    configs: dict[str, str] = field(default_factory=dict)


@dataclass
class MemoryKafka:
    """A cluster whose partitions are always fully in sync unless told otherwise."""

    brokers: set[int]
    controller: int | None = 0
    topics: dict[str, Topic] = field(default_factory=dict)
    out_of_sync: set[tuple[str, int]] = field(default_factory=set)
    available: bool = True
    reassignments: list[Mapping[tuple[str, int], tuple[int, ...]]] = field(default_factory=list)

    def __call__(self, bootstrap_servers: str) -> MemoryKafka:
        self.bootstrap_servers = bootstrap_servers
        return self

    def _check(self) -> None:
        if not self.available:
            raise KafkaAdminError("connection refused")

    def describe(self) -> ClusterMetadata:
        self._check()
        partitions = tuple(
            Partition(
                name,
                i,
                r,
                r[:1] if (name, i) in self.out_of_sync else r,
                int(t.configs.get("min.insync.replicas", "1")),
            )
            for name, t in sorted(self.topics.items())
            for i, r in enumerate(t.replicas)
        )
        return ClusterMetadata(frozenset(self.brokers), self.controller, partitions)

    def topic(self, name: str) -> ObservedTopic | None:
        self._check()
        t = self.topics.get(name)
        if t is None:
            return None
        return ObservedTopic(t.id, len(t.replicas), len(t.replicas[0]), dict(t.configs))

    def create_topic(
        self, name: str, partitions: int, replicas: int, configs: Mapping[str, str]
    ) -> None:
        self._check()
        ids = sorted(self.brokers)
        layout = [
            tuple(ids[(p + r) % len(ids)] for r in range(replicas)) for p in range(partitions)
        ]
        self.topics[name] = Topic(str(uuid.uuid4()), layout, dict(configs))

    def create_partitions(self, name: str, total: int) -> None:
        t = self.topics[name]
        t.replicas += [t.replicas[0]] * (total - len(t.replicas))

    def alter_configs(self, name: str, set_: Mapping[str, str], delete: tuple[str, ...]) -> None:
        t = self.topics[name]
        t.configs = {k: v for k, v in {**t.configs, **set_}.items() if k not in delete}

    def reassign(self, moves: Mapping[tuple[str, int], tuple[int, ...]]) -> None:
        self._check()
        self.reassignments.append(dict(moves))
        for (name, index), replicas in moves.items():
            self.topics[name].replicas[index] = replicas

    def delete_topic(self, name: str) -> None:
        self._check()
        del self.topics[name]
