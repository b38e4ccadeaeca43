"""The cluster metadata every broker holds: brokers, topics, partition states, dynamic
broker and group configs and SCRAM credentials."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from odradek.broker.config.dynamic_group_configs import GroupConfigs
from odradek.broker.security.acl_model import AclBinding
from odradek.broker.security.client_quota import QuotaEntity, QuotaValues
from odradek.broker.security.scram_credential import ScramCredential, ScramMechanism

ScramCredentialKey = tuple[str, ScramMechanism]
"""(user name, mechanism): what one SCRAM credential is stored under."""


@dataclass(frozen=True)
class BrokerEndpoint:
    """One advertised listener of a broker."""

    listener: str
    host: str
    port: int


@dataclass(frozen=True)
class BrokerRegistration:
    """A broker as the cluster knows it; ``host`` and ``port`` are its inter-broker
    listener's address, ``endpoints`` every advertised listener."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    # Which registration this is (etcd's create revision of its key), like Kafka's broker
    # epoch: a broker that restarts, or registers again after losing its session, gets a
    # new one.
    epoch: int = 0
    endpoints: tuple[BrokerEndpoint, ...] = ()
    # The id of its first log directory (see directory_id). One process at a time holds
    # that directory, so a registration with this broker's node id and directory id was
    # left by an earlier run of this very broker.
    directory_id: str = ""
    # (topic, partition) of its replicas in a log directory an I/O error took offline:
    # they answer KAFKA_STORAGE_ERROR, so the controller moves their leadership and ISR
    # places to other replicas until the broker restarts with the disk repaired.
    offline_replicas: frozenset[tuple[str, int]] = frozenset()
    # Which run of the broker process registered (random per start): a registration of
    # the same run after a lost session continues it, its logs never stopped.
    incarnation: str = ""

    def endpoint(self, listener: str) -> BrokerEndpoint | None:
        """Where clients of ``listener`` reach this broker; None if it has no such listener
        (a registration without endpoints answers every listener with its one address)."""
        if not self.endpoints:
            return BrokerEndpoint(listener, self.host, self.port)
        return next((e for e in self.endpoints if e.listener == listener), None)


@dataclass(frozen=True)
class PartitionState:
    """Leadership of one partition, as the controller last wrote it."""

    partition: int
    replicas: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    # During a reassignment ``replicas`` holds the target replicas followed by those
    # being removed; ``adding`` must join the ISR before ``removing`` is dropped.
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def to_json(self) -> dict[str, Any]:
        data = {
            "partition": self.partition,
            "replicas": list(self.replicas),
            "leader": self.leader,
            "leader_epoch": self.leader_epoch,
            "isr": list(self.isr),
        }
        if self.reassigning:
            data["adding"], data["removing"] = list(self.adding), list(self.removing)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PartitionState:
        return cls(
            partition=data["partition"],
            replicas=tuple(data["replicas"]),
            leader=data["leader"],
            leader_epoch=data["leader_epoch"],
            isr=tuple(data["isr"]),
            adding=tuple(data.get("adding", ())),
            removing=tuple(data.get("removing", ())),
        )


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    partitions: tuple[PartitionState, ...]
    configs: Mapping[str, str] = field(default_factory=dict)
    internal: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "topic_id": str(self.topic_id),
            "partitions": [state.to_json() for state in self.partitions],
            "configs": dict(self.configs),
            "internal": self.internal,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TopicMetadata:
        return cls(
            name=data["name"],
            topic_id=uuid.UUID(data["topic_id"]),
            partitions=tuple(PartitionState.from_json(item) for item in data["partitions"]),
            configs=dict(data["configs"]),
            internal=data.get("internal", False),
        )


@dataclass(frozen=True)
class MetadataImage:
    """An immutable snapshot; changes produce a new image."""

    cluster_id: str
    controller_id: int
    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)
    topics: Mapping[str, TopicMetadata] = field(default_factory=dict)
    # Dynamic broker configs by resource name: "" for the cluster default, else a broker id.
    broker_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # The registration epoch of each broker the controller has unfenced: it took the
    # broker's leaderships and ISR places of any earlier registration away first.
    unfenced: Mapping[int, int] = field(default_factory=dict)
    # Salted and hashed (KIP-554): what SASL/SCRAM checks proofs against, never a password.
    scram_credentials: Mapping[ScramCredentialKey, ScramCredential] = field(default_factory=dict)
    # Shared by every broker, never sent to a client: salts SCRAM's answers to unknown users
    # alike on each broker, so comparing brokers tells no one which users exist.
    scram_decoy_secret: bytes = field(default=b"", repr=False)
    # Kafka's ACL bindings (CreateAcls), which every broker's authorizer indexes.
    acls: frozenset[AclBinding] = frozenset()
    # Client quotas (KIP-546) by entity: AlterClientQuotas writes them, every broker enforces.
    client_quotas: Mapping[QuotaEntity, QuotaValues] = field(default_factory=dict)
    # Dynamic group configs (Kafka's GROUP config resource) by group id, as set: validated text.
    group_configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @cached_property
    def _topic_names_by_id(self) -> Mapping[uuid.UUID, str]:
        return {topic.topic_id: name for name, topic in self.topics.items()}

    def topic_name(self, topic_id: uuid.UUID | None) -> str | None:
        """The name of the topic with ``topic_id`` (requests since KIP-516 name topics by id)."""
        return self._topic_names_by_id.get(topic_id) if topic_id is not None else None

    def offline_holders(self) -> dict[tuple[str, int], frozenset[int]]:
        """(topic, partition) -> the brokers whose replica of it is in an offline log dir."""
        holders: dict[tuple[str, int], set[int]] = {}
        for node, broker in self.brokers.items():
            for replica in broker.offline_replicas:
                holders.setdefault(replica, set()).add(node)
        return {replica: frozenset(nodes) for replica, nodes in holders.items()}

    def fenced_brokers(self) -> set[int]:
        """Registered brokers whose current registration the controller has not unfenced."""
        return {
            node for node, broker in self.brokers.items() if self.unfenced.get(node) != broker.epoch
        }

    def with_topic(self, topic: TopicMetadata) -> MetadataImage:
        return replace(self, topics={**self.topics, topic.name: topic})

    def without_topic(self, name: str) -> MetadataImage:
        return replace(self, topics={k: v for k, v in self.topics.items() if k != name})

    def with_broker_configs(self, resource: str, configs: Mapping[str, str]) -> MetadataImage:
        return replace(self, broker_configs={**self.broker_configs, resource: dict(configs)})

    def configs_of_group(self, group_id: str) -> GroupConfigs:
        """``group_id``'s dynamic configs, typed (a group that sets none: every default)."""
        return GroupConfigs(self.group_configs.get(group_id, {}))

    def with_group_configs(self, group_id: str, configs: Mapping[str, str]) -> MetadataImage:
        """``group_id``'s configs replaced; a group left with none has no entry."""
        kept = {k: v for k, v in self.group_configs.items() if k != group_id}
        return replace(self, group_configs={**kept, group_id: dict(configs)} if configs else kept)

    def scram_credential(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """``user``'s credential for ``mechanism``: a ``ScramCredentialLookup`` for SASL/SCRAM."""
        return self.scram_credentials.get((user, mechanism))

    @cached_property
    def scram_users(self) -> Mapping[str, tuple[ScramCredential, ...]]:
        """Every user with a SCRAM credential, by name, each with their credentials in
        mechanism order (SCRAM-SHA-256 first), as DescribeUserScramCredentials lists them."""
        users: dict[str, list[ScramCredential]] = {}
        for (user, _), credential in sorted(
            self.scram_credentials.items(), key=lambda item: (item[0][0], item[0][1].wire_type)
        ):
            users.setdefault(user, []).append(credential)
        return {user: tuple(credentials) for user, credentials in users.items()}

    def with_scram_credentials(
        self,
        upsertions: Mapping[ScramCredentialKey, ScramCredential],
        deletions: Collection[ScramCredentialKey],
    ) -> MetadataImage:
        kept = {k: v for k, v in self.scram_credentials.items() if k not in deletions}
        return replace(self, scram_credentials={**kept, **upsertions})

    def with_acls(
        self, additions: Collection[AclBinding], deletions: Collection[AclBinding]
    ) -> MetadataImage:
        return replace(self, acls=(self.acls - frozenset(deletions)) | frozenset(additions))

    def with_client_quotas(self, changes: Mapping[QuotaEntity, QuotaValues]) -> MetadataImage:
        """Each changed entity's new values; an entity left with none is removed."""
        kept = {k: v for k, v in self.client_quotas.items() if k not in changes}
        return replace(self, client_quotas={**kept, **{k: v for k, v in changes.items() if v}})
