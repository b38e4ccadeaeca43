"""The records of the mirror's own topics on the target, and reading them back.

``<source>.checkpoints.internal`` (compacted) holds one record per consumer
group, target topic and partition::

    key   {"group": "billing", "topic": "east.orders", "partition": 3}
    value {"sourceTopic": "orders", "upstreamOffset": 1200, "downstreamOffset": 1187}

``<source>.offset-syncs.internal`` (compacted) holds the newest offset run of
each mirrored source partition::

    key   {"topic": "orders", "partition": 3}
    value {"sourceStart": 1000, "sourceEnd": 1200, "targetStart": 987}

With ``exactlyOnce``, ``<source>.mirror-offsets.internal`` (compacted) holds the next
source offset of each partition a mirror copied, written in the transaction that copied
the records before it::

    key   {"mirror": "east-to-west", "topic": "orders", "partition": 3}
    value {"offset": 1200}

They are JSON so any client (kcat, a script) can read them during a failover.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition

from .offset_translation import OffsetRun

Record = tuple[bytes, bytes]
POLL_S = 0.1


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


def mirror_offset_record(mirror: str, partition: tuple[str, int], offset: int) -> Record:
    return _dump({"mirror": mirror, "topic": partition[0], "partition": partition[1]}), _dump(
        {"offset": offset}
    )


def read_mirror_offsets(
    client_config: Mapping[str, Any], topic: str, mirror: str
) -> dict[tuple[str, int], int]:
    """Source partition -> next offset to copy, as ``mirror``'s committed transactions left
    them."""
    found: dict[tuple[str, int], int] = {}
    for key, value in read_latest(client_config, topic).items():
        k = json.loads(key)
        if k["mirror"] == mirror:
            found[(k["topic"], k["partition"])] = json.loads(value)["offset"]
    return found


def read_latest(
    client_config: Mapping[str, Any], topic: str, timeout: float = 10.0
) -> dict[bytes, bytes]:
    """The newest value of every key of a one-partition topic, read to its end (no group),
    read_committed: the end as it was when the read began, which transactions open then
    hold back until they end. Raises KafkaException when the read stalls for ``timeout``."""
    consumer = Consumer(
        {
            **client_config,
            "group.id": "odradek-mirror-reader",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        partition = TopicPartition(topic, 0)
        _, end = consumer.get_watermark_offsets(partition, timeout=timeout)
        latest: dict[bytes, bytes] = {}
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        position, stalled_since = 0, time.monotonic()
        while position < end:
            message = consumer.poll(POLL_S)
            if message is not None and message.error() is None:
                key, value = message.key(), message.value()
                if key is not None and value is not None:
                    latest[key] = value
            # the position passes markers and aborted records too, unlike the records read
            [now_at] = consumer.position([partition])
            if now_at.offset > position:
                position, stalled_since = now_at.offset, time.monotonic()
            elif time.monotonic() - stalled_since > timeout:
                raise KafkaException(f"reading {topic} stalled at offset {position} of {end}")
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
