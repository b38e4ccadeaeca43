"""Replicas whose log directory failed at start-up (Kafka's LogManager.getOrCreateLog with
an offline dir): a replica assigned here before the start whose log did not load is offline
(KAFKA_STORAGE_ERROR, reported in ``offline_replicas``) and gets no empty log in another
directory; a replica assigned after the start is created in an online one."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.log import LogConfig, LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

NODE = 0


def topic(name: str, partitions: int) -> TopicMetadata:
    states = tuple(PartitionState(p, (NODE,), NODE, isr=(NODE,)) for p in range(partitions))
    return TopicMetadata(name, uuid.uuid4(), states)


def test_a_replica_left_in_a_log_dir_offline_at_start_is_offline_until_unassigned(
    tmp_path: Path,
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "t-0").mkdir(parents=True)  # t-0 was in a, t-1 in b
    b.write_text("a failed disk")  # loading b fails with a real OSError
    logs = LogManager(a, b)
    logs.load()
    replicas = ReplicaManager(NODE, logs, lambda _: LogConfig())
    announced: list[None] = []
    replicas.on_offline_replicas(lambda: announced.append(None))
    image = MetadataImage("c", NODE).with_topic(topic("t", 2))
    try:
        replicas.apply(None, image)
        assert replicas.offline_replicas() == {PartitionKey("t", 1)}
        assert announced
        assert [p.key for p in replicas] == [PartitionKey("t", 0)]
        with pytest.raises(KafkaError) as refused:
            replicas.get("t", 1)
        assert refused.value.code == ErrorCode.kafka_storage_error
        assert not (a / "t-1").exists()

        later = image.with_topic(topic("u", 1))  # created after the start: a new replica
        replicas.apply(image, later)
        assert replicas.get("u", 0).log.directory == a / "u-0"
        assert not (a / "t-1").exists()

        gone = later.without_topic("t")
        replicas.apply(later, gone)
        assert replicas.offline_replicas() == frozenset()
        with pytest.raises(KafkaError) as unknown:
            replicas.get("t", 1)
        assert unknown.value.code == ErrorCode.unknown_topic_or_partition
    finally:
        logs.close_all()
