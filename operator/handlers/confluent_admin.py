"""KafkaAdmin over confluent-kafka's AdminClient; reassignments through kafka-python."""

from __future__ import annotations

import ssl
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import KafkaException, TopicCollection
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exports
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from ..constants import MIN_INSYNC_REPLICAS
from ..planning.partitions import Partition
from ..planning.topic_changes import ObservedTopic
from .kafka_admin import TIMEOUT_SECONDS, ClientTls, ClusterMetadata, KafkaAdminError
from .user_access_admin import UserAccessAdmin

T = TypeVar("T")


def _wait(future: Future[T], timeout: float) -> T:
    try:
        return future.result(timeout=timeout)
    except (KafkaException, TimeoutError) as error:
        raise KafkaAdminError(str(error)) from error


class ConfluentAdmin(UserAccessAdmin):
    def __init__(
        self,
        bootstrap_servers: str,
        tls: ClientTls | None = None,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.tls = tls
        self.timeout = timeout
        self._client = AdminClient(
            {
                "bootstrap.servers": bootstrap_servers,
                "socket.timeout.ms": int(timeout * 1000),
                **(tls.librdkafka() if tls is not None else {}),
            }
        )

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except KafkaException as error:
            raise KafkaAdminError(str(error)) from error

    def describe(self) -> ClusterMetadata:
        metadata = self._call(self._client.list_topics, timeout=self.timeout)
        names = [n for n, t in metadata.topics.items() if t.error is None]
        min_isr = self._min_isr(names)
        partitions = tuple(
            Partition(name, index, tuple(p.replicas), tuple(p.isrs), min_isr.get(name, 1))
            for name in names
            for index, p in sorted(metadata.topics[name].partitions.items())
        )
        controller = metadata.controller_id if metadata.controller_id >= 0 else None
        return ClusterMetadata(frozenset(metadata.brokers), controller, partitions)

    def _overrides(self, names: list[str], dynamic_only: bool) -> dict[str, dict[str, str]]:
        if not names:
            return {}
        resources = [ConfigResource(ConfigResource.Type.TOPIC, n) for n in names]
        futures = self._call(self._client.describe_configs, resources)
        result = {}
        for resource, future in futures.items():
            entries = _wait(future, self.timeout).values()
            result[resource.name] = {
                e.name: e.value
                for e in entries
                if e.value is not None
                and (not dynamic_only or e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
            }
        return result

    def _min_isr(self, names: list[str]) -> dict[str, int]:
        configs = self._overrides(names, dynamic_only=False)
        return {n: int(c.get(MIN_INSYNC_REPLICAS, "1")) for n, c in configs.items()}

    def topic(self, name: str) -> ObservedTopic | None:
        # All topics: a Metadata request naming the topic may auto-create it.
        metadata = self._call(self._client.list_topics, timeout=self.timeout)
        found = metadata.topics.get(name)
        if found is None or found.error is not None or not found.partitions:
            return None
        [description] = self._call(self._client.describe_topics, TopicCollection([name])).values()
        replicas = max(len(p.replicas) for p in found.partitions.values())
        return ObservedTopic(
            topic_id=str(_wait(description, self.timeout).topic_id),
            partitions=len(found.partitions),
            replicas=replicas,
            overrides=self._overrides([name], dynamic_only=True)[name],
        )

    def create_topic(
        self, name: str, partitions: int, replicas: int, configs: Mapping[str, str]
    ) -> None:
        new = NewTopic(
            name, num_partitions=partitions, replication_factor=replicas, config=dict(configs)
        )
        for future in self._call(self._client.create_topics, [new]).values():
            _wait(future, self.timeout)

    def create_partitions(self, name: str, total: int) -> None:
        for future in self._call(
            self._client.create_partitions, [NewPartitions(name, total)]
        ).values():
            _wait(future, self.timeout)

    def alter_configs(self, name: str, set_: Mapping[str, str], delete: tuple[str, ...]) -> None:
        entries = [
            ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in set_.items()
        ] + [ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE) for k in delete]
        resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=entries)
        for future in self._call(self._client.incremental_alter_configs, [resource]).values():
            _wait(future, self.timeout)

    def reassign(self, moves: Mapping[tuple[str, int], tuple[int, ...]]) -> None:
        """confluent-kafka has no AlterPartitionReassignments; kafka-python does."""
        from kafka import TopicPartition
        from kafka.admin import KafkaAdminClient
        from kafka.errors import KafkaError

        try:
            client = KafkaAdminClient(
                bootstrap_servers=self.bootstrap_servers.split(","), **self._kafka_python_settings()
            )
            try:
                results = client.alter_partition_reassignments(
                    {TopicPartition(t, p): list(r) for (t, p), r in moves.items()},
                    timeout_ms=int(self.timeout * 1000),
                )
            finally:
                client.close()
        except KafkaError as error:
            raise KafkaAdminError(f"reassignment failed: {error}") from error
        refused = {f"{tp.topic}-{tp.partition}": e for tp, e in results.items() if e is not None}
        if refused:
            raise KafkaAdminError(f"reassignment refused: {refused}")

    def _kafka_python_settings(self) -> dict[str, Any]:
        """kafka-python's settings for ``tls``: an SSLContext (its key and certificate go
        through files: Python's ssl loads them from nowhere else)."""
        if self.tls is None:
            return {}
        context = ssl.create_default_context(cadata=self.tls.ca_pem)
        with tempfile.TemporaryDirectory(prefix="odradek-admin-") as directory:
            chain = Path(directory) / "client.pem"
            chain.touch(mode=0o600)
            chain.write_text(self.tls.key_pem + self.tls.cert_pem)
            context.load_cert_chain(chain)
        return {"security_protocol": "SSL", "ssl_context": context}

    def delete_topic(self, name: str) -> None:
        for future in self._call(self._client.delete_topics, [name]).values():
            _wait(future, self.timeout)
