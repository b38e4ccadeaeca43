"""Where cluster metadata lives: the interface and the embedded single-node store.

A single broker with no etcd keeps its metadata in one JSON file in its data
directory, rewritten atomically on every change; the etcd-backed store of a
multi-broker cluster implements the same interface. A change the file cannot take (a
full or failing disk) is refused with KAFKA_STORAGE_ERROR and not applied.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    ScramCredentialKey,
    TopicMetadata,
)
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.acl_model import AclBinding
from odradek.broker.security.client_quota import (
    QuotaEntity,
    QuotaValues,
    decode_client_quota,
    encode_client_quota,
)
from odradek.broker.security.scram_credential import ScramCredential

log = logging.getLogger(__name__)

PRODUCER_ID_BLOCK_SIZE = 1000
Listener = Callable[[MetadataImage, MetadataImage], None]


class ImageSubscribers:
    """Who hears of a store's image changes: listeners, called after every change in the
    order they subscribed, and one-shot waiters for the next change (both stores share
    this, so they publish alike)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._waiters: list[asyncio.Future[None]] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def publish(self, old: MetadataImage, new: MetadataImage) -> None:
        for listener in list(self._listeners):  # a listener may subscribe another
            listener(old, new)
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def next_change(self) -> asyncio.Future[None]:
        """A future resolved at the next change of the image."""
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return waiter


class MetadataStore(Protocol):
    @property
    def image(self) -> MetadataImage: ...

    async def create_topic(self, topic: TopicMetadata) -> None: ...

    async def delete_topic(self, name: str) -> None: ...

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None: ...

    async def set_broker_configs(self, resource: str, configs: dict[str, str]) -> None:
        """Replace the dynamic configs of a broker id, or of the cluster default ("")."""
        ...

    async def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        """Replace a group's dynamic configs (none: remove its entry); returns once this
        broker's image shows them."""
        ...

    async def add_partitions(self, name: str, partitions: tuple[PartitionState, ...]) -> None: ...

    async def update_partition(
        self, topic: str, expected: PartitionState, state: PartitionState
    ) -> bool:
        """Compare-and-set of one partition's leadership state; False if it had changed."""
        ...

    async def reserve_producer_ids(self, count: int) -> int:
        """Reserve ``count`` producer ids; returns the first."""
        ...

    async def alter_scram_credentials(
        self,
        upsertions: Mapping[ScramCredentialKey, ScramCredential],
        deletions: Collection[ScramCredentialKey],
    ) -> bool:
        """Store ``upsertions`` and remove ``deletions`` at once, as Kafka's controller
        applies one AlterUserScramCredentials; False, writing nothing, if a credential to
        remove is gone or has changed since the image (the caller decides again on the
        newer image)."""
        ...

    async def alter_acls(
        self, additions: Collection[AclBinding], deletions: Collection[AclBinding]
    ) -> None:
        """Store ``additions`` and remove ``deletions`` (CreateAcls, DeleteAcls); adding a
        binding held already, or removing one gone already, changes nothing. Returns once
        this broker's image shows the change."""
        ...

    async def alter_client_quotas(
        self, changes: Mapping[QuotaEntity, QuotaValues], expected: MetadataImage
    ) -> bool:
        """Give each entity of ``changes`` its new values (none: remove it) at once, as
        Kafka's controller applies one AlterClientQuotas; False, writing nothing, if one of
        them changed since ``expected`` (the caller decides again on the newer image)."""
        ...

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(old, new)`` after every change of the image."""
        ...


class EmbeddedMetadataStore:
    """The store of a single broker on the embedded default, persisted in its data dir."""

    FILE_NAME = "cluster-metadata.json"

    def __init__(self, data_dir: Path, broker: BrokerRegistration) -> None:
        self._path = data_dir / self.FILE_NAME
        self._write_failing = False  # logged once per run of failed writes
        self._subscribers = ImageSubscribers()
        data = json.loads(self._path.read_text()) if self._path.exists() else {}
        self._next_producer_id: int = data.get("next_producer_id", 0)
        self._image = MetadataImage(
            cluster_id=data.get("cluster_id") or uuid.uuid4().hex[:22],
            controller_id=broker.node_id,
            brokers={broker.node_id: broker},
            topics={item["name"]: TopicMetadata.from_json(item) for item in data.get("topics", [])},
            broker_configs=data.get("broker_configs", {}),
            scram_credentials=dict(map(_decode_scram, data.get("scram_credentials", []))),
            acls=frozenset(map(AclBinding.from_json, data.get("acls", []))),
            client_quotas=dict(map(decode_client_quota, data.get("client_quotas", []))),
            group_configs=data.get("group_configs", {}),
            scram_decoy_secret=bytes.fromhex(
                data.get("scram_decoy_secret") or secrets.token_hex(32)
            ),
            # no controller fences the only broker: it is unfenced from the start
            unfenced={broker.node_id: broker.epoch},
        )
        self._write(self._image, self._next_producer_id)  # an OSError stops the start

    @property
    def image(self) -> MetadataImage:
        return self._image

    def subscribe(self, listener: Listener) -> None:
        self._subscribers.subscribe(listener)

    async def create_topic(self, topic: TopicMetadata) -> None:
        if topic.name in self._image.topics:
            raise KafkaError(ErrorCode.topic_already_exists, f"topic {topic.name!r} already exists")
        self._apply(self._image.with_topic(topic))

    async def delete_topic(self, name: str) -> None:
        if name not in self._image.topics:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        self._apply(self._image.without_topic(name))

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        self._apply(self._image.with_topic(replace(self._topic(name), configs=configs)))

    def _topic(self, name: str) -> TopicMetadata:
        topic = self._image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        return topic

    async def set_broker_configs(self, resource: str, configs: dict[str, str]) -> None:
        self._apply(self._image.with_broker_configs(resource, configs))

    async def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        self._apply(self._image.with_group_configs(group_id, configs))

    async def add_partitions(self, name: str, partitions: tuple[PartitionState, ...]) -> None:
        topic = self._topic(name)
        self._apply(
            self._image.with_topic(replace(topic, partitions=topic.partitions + partitions))
        )

    async def update_partition(
        self, topic: str, expected: PartitionState, state: PartitionState
    ) -> bool:
        current = self._topic(topic)
        if current.partitions[state.partition] != expected:
            return False
        partitions = list(current.partitions)
        partitions[state.partition] = state
        self._apply(self._image.with_topic(replace(current, partitions=tuple(partitions))))
        return True

    async def alter_scram_credentials(
        self,
        upsertions: Mapping[ScramCredentialKey, ScramCredential],
        deletions: Collection[ScramCredentialKey],
    ) -> bool:
        if not all(key in self._image.scram_credentials for key in deletions):
            return False
        self._apply(self._image.with_scram_credentials(upsertions, deletions))
        return True

    async def alter_acls(
        self, additions: Collection[AclBinding], deletions: Collection[AclBinding]
    ) -> None:
        self._apply(self._image.with_acls(additions, deletions))

    async def alter_client_quotas(
        self, changes: Mapping[QuotaEntity, QuotaValues], expected: MetadataImage
    ) -> bool:
        current = self._image.client_quotas
        if any(current.get(entity) != expected.client_quotas.get(entity) for entity in changes):
            return False
        self._apply(self._image.with_client_quotas(changes))
        return True

    async def reserve_producer_ids(self, count: int) -> int:
        first = self._next_producer_id
        self._persist(self._image, first + count)
        self._next_producer_id = first + count
        return first

    def _apply(self, image: MetadataImage) -> None:
        self._persist(image, self._next_producer_id)
        old, self._image = self._image, image
        self._subscribers.publish(old, image)

    def _persist(self, image: MetadataImage, next_producer_id: int) -> None:
        """Write the file; KAFKA_STORAGE_ERROR if it cannot be written (the change is then
        not made: the broker serves on with what the file holds)."""
        try:
            self._write(image, next_producer_id)
        except OSError as error:
            message = (
                f"cannot write the cluster metadata to {self._path}: {error.strerror or error}"
            )
            if not self._write_failing:
                log.error("%s; metadata changes fail until it can", message)
            self._write_failing = True
            raise KafkaError(ErrorCode.kafka_storage_error, message) from error
        self._write_failing = False

    def _write(self, image: MetadataImage, next_producer_id: int) -> None:
        data = {
            "cluster_id": image.cluster_id,
            "next_producer_id": next_producer_id,
            "topics": [topic.to_json() for topic in image.topics.values()],
            "broker_configs": {k: dict(v) for k, v in image.broker_configs.items()},
            "scram_credentials": [
                {"user": user, **json.loads(credential.to_json())}
                for (user, _), credential in image.scram_credentials.items()
            ],
            "acls": [binding.to_json() for binding in image.acls],
            "client_quotas": [
                encode_client_quota(entity, values)
                for entity, values in image.client_quotas.items()
            ],
            "scram_decoy_secret": image.scram_decoy_secret.hex(),
            "group_configs": {k: dict(v) for k, v in image.group_configs.items()},
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self._path.with_suffix(".tmp")
        with temporary.open("w") as file:
            os.fchmod(file.fileno(), 0o600)  # SCRAM credentials: hashed, yet for no one else
            json.dump(data, file, indent=1)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self._path)


def _decode_scram(item: Mapping[str, object]) -> tuple[ScramCredentialKey, ScramCredential]:
    """One credential of the file: its fields, and the user it belongs to."""
    credential = ScramCredential.from_json(json.dumps(item))
    return (str(item["user"]), credential.mechanism), credential
