"""The records of the mirror's own topics on the target, and reading them back.

``<source>.checkpoints.internal`` (compacted) holds one record per consumer
group, target topic and partition::

    key   {"group": "billing", "topic": "east.orders", "partition": 3}
    value {"sourceTopic": "orders", "upstreamOffset": 1200, "downstreamOffset": 1187}

``<source>.offset-syncs.internal`` (compacted) holds the newest offset run of
each mirrored source partition::

    key   {"topic": "orders", "partition": 3}
    value {"sourceStart": 1000, "sourceEnd": 1200, "targetStart": 987}

Both are JSON so any client (kcat, a script) can read them during a failover.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from .offset_translation import OffsetRun

Record = tuple[bytes, bytes]


def _dump(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Checkpoint:
    """A consumer group's committed source offset and its translation on the target."""

    group: str
    topic: str
    """The target topic."""
    partition: int
    source_topic: str
    upstream_offset: int
    downstream_offset: int

    def to_record(self) -> Record:
        key = {"group": self.group, "topic": self.topic, "partition": self.partition}
        value = {
            "sourceTopic": self.source_topic,
            "upstreamOffset": self.upstream_offset,
            "downstreamOffset": self.downstream_offset,
        }
        return _dump(key), _dump(value)

    @classmethod
    def from_record(cls, key: bytes, value: bytes) -> Checkpoint:
        k, v = json.loads(key), json.loads(value)
        return cls(
            k["group"],
            k["topic"],
            k["partition"],
            v["sourceTopic"],
            v["upstreamOffset"],
            v["downstreamOffset"],
        )


def offset_sync_record(partition: tuple[str, int], run: OffsetRun) -> Record:
    key = {"topic": partition[0], "partition": partition[1]}
    value = {
        "sourceStart": run.source_start,
        "sourceEnd": run.source_end,
        "targetStart": run.target_start,
    }
    return _dump(key), _dump(value)


def offset_sync_from_record(key: bytes, value: bytes) -> tuple[tuple[str, int], OffsetRun]:
    k, v = json.loads(key), json.loads(value)
    run = OffsetRun(v["sourceStart"], v["sourceEnd"], v["targetStart"])
    return (k["topic"], k["partition"]), run


def read_latest(
    client_config: Mapping[str, Any], topic: str, timeout: float = 10.0
) -> dict[bytes, bytes]:
    """The newest value of every key of a one-partition topic, read to its end (no group)."""
    consumer = Consumer(
        {**client_config, "group.id": "odradek-mirror-reader", "enable.auto.commit": False}
    )
    try:
        partition = TopicPartition(topic, 0)
        _, end = consumer.get_watermark_offsets(partition, timeout=timeout)
        latest: dict[bytes, bytes] = {}
        if end <= 0:
            return latest
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        position = 0
        while position < end:
            message = consumer.poll(timeout)
            if message is None:
                raise KafkaException(f"reading {topic} timed out at offset {position} of {end}")
            if message.error() is not None:
                continue
            key, value = message.key(), message.value()
            if key is not None and value is not None:
                latest[key] = value
            position = int(message.offset()) + 1  # type: ignore[arg-type]
        return latest
    finally:
        consumer.close()


def read_checkpoints(
    client_config: Mapping[str, Any], checkpoints_topic: str, group: str
) -> dict[tuple[str, int], int]:
    """Target topic and partition -> offset to resume ``group`` from on the target."""
    found: dict[tuple[str, int], int] = {}
    for key, value in read_latest(client_config, checkpoints_topic).items():
        point = Checkpoint.from_record(key, value)
        if point.group == group:
            found[(point.topic, point.partition)] = point.downstream_offset
    return found
