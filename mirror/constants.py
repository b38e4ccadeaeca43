"""Defaults and fixed names of the mirror, in one place."""

from __future__ import annotations

PROVENANCE_HEADER = "odradek.mirror.source"
"""Header added to every mirrored record: ``<source alias>/<topic>/<partition>/<offset>``."""

INTERNAL_TOPIC_SUFFIX = ".internal"
CHECKPOINTS_TOPIC = "{source}.checkpoints.internal"
"""On the target: translated consumer group offsets (compacted)."""
OFFSET_SYNCS_TOPIC = "{source}.offset-syncs.internal"
"""On the target: source -> target offset pairs of each mirrored partition (compacted)."""
MIRROR_OFFSETS_TOPIC = "{source}.mirror-offsets.internal"
"""On the target, exactly-once: the next source offset of each partition (compacted)."""
TRANSACTIONAL_ID = "{group}/{topic}/{partition}"
"""Exactly-once: one transactional producer per source partition, so whichever process
takes the partition over fences the one that had it."""
MIRROR_GROUP = "odradek-mirror.{name}"
"""The consumer group the mirror processes of one config share on the source."""

DEFAULT_INTERVAL_S = 60.0
DEFAULT_REFRESH_INTERVAL_S = 60.0
DEFAULT_COMMIT_INTERVAL_S = 1.0
DEFAULT_QUEUE_SIZE = 10_000
DEFAULT_REPLICATION_FACTOR = -1
"""-1: the target broker's default.replication.factor."""
PROGRESS_LOG_INTERVAL_S = 10.0
FETCH_BATCH = 500
DRAIN_TIMEOUT_S = 30.0

SYNCED_TOPIC_CONFIGS = frozenset(
    {
        "cleanup.policy",
        "compression.type",
        "delete.retention.ms",
        "max.compaction.lag.ms",
        "max.message.bytes",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.ms",
    }
)
"""Topic configs copied to the target when set on the source topic. Not copied:
message.timestamp.type (LogAppendTime would overwrite the preserved timestamps),
min.insync.replicas and replication settings (properties of the target cluster)."""

PRODUCER_DEFAULTS: dict[str, str | int | bool] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
    "message.timeout.ms": 300_000,
    "partitioner": "murmur2_random",
    "compression.type": "lz4",
}
CONSUMER_DEFAULTS: dict[str, str | int | bool] = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "earliest",
    "enable.partition.eof": False,
    "isolation.level": "read_committed",
}
