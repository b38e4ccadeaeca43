"""The operator's view of a Kafka cluster through its admin API."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..planning.partitions import Partition
from ..planning.topic_changes import ObservedTopic
from ..planning.user_access import AclBinding

TIMEOUT_SECONDS = 10.0


class KafkaAdminError(Exception):
    """The cluster could not be reached, did not answer in time, or refused the request."""


@dataclass(frozen=True)
class ClientTls:
    """How the operator connects to a Cluster with TLS: the cluster CA and its own client
    certificate (PEM text), accepted on the replication listener."""

    ca_pem: str
    cert_pem: str
    key_pem: str = field(repr=False)

    def librdkafka(self) -> dict[str, str]:
        return {
            "security.protocol": "SSL",
            "ssl.ca.pem": self.ca_pem,
            "ssl.certificate.pem": self.cert_pem,
            "ssl.key.pem": self.key_pem,
        }


@dataclass(frozen=True)
class ClusterMetadata:
    brokers: frozenset[int]
    controller: int | None
    partitions: tuple[Partition, ...]


class KafkaAdmin(Protocol):
    """What reconciliation needs from a Kafka cluster."""

    def describe(self) -> ClusterMetadata: ...

    def topic(self, name: str) -> ObservedTopic | None: ...

    def create_topic(
        self, name: str, partitions: int, replicas: int, configs: Mapping[str, str]
    ) -> None: ...

    def create_partitions(self, name: str, total: int) -> None: ...

    def alter_configs(
        self, name: str, set_: Mapping[str, str], delete: tuple[str, ...]
    ) -> None: ...

    def reassign(self, moves: Mapping[tuple[str, int], tuple[int, ...]]) -> None: ...

    def delete_topic(self, name: str) -> None: ...

    def scram_mechanisms(self, user: str) -> frozenset[str]: ...

    def set_scram_password(self, user: str, mechanism: str, password: str) -> None: ...

    def delete_scram(self, user: str, mechanisms: Iterable[str]) -> None: ...

    def acls(self, principal: str) -> frozenset[AclBinding]: ...

    def create_acls(self, bindings: Iterable[AclBinding]) -> None: ...

    def delete_acls(self, bindings: Iterable[AclBinding]) -> None: ...

    def user_quotas(self, user: str) -> dict[str, float]: ...

    def alter_user_quotas(self, user: str, changes: Mapping[str, float | None]) -> None: ...


class AdminFactory(Protocol):
    def __call__(self, bootstrap_servers: str, tls: ClientTls | None = None) -> KafkaAdmin: ...
