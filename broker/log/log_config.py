"""Per-topic log settings, named and defaulted as Kafka's topic configs."""

from __future__ import annotations

from dataclasses import dataclass

NEVER = 2**63 - 1
DELETE = "delete"
COMPACT = "compact"
PRODUCER = "producer"  # compression.type: keep the producer's codec
UNCOMPRESSED = "uncompressed"
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"


@dataclass(frozen=True)
class LogConfig:
    """Kafka's topic-level log settings (each field's comment names the topic config)."""

    segment_bytes: int = 1024**3  # segment.bytes
    segment_ms: int = 7 * 24 * 3600 * 1000  # segment.ms
    index_interval_bytes: int = 4096  # index.interval.bytes
    flush_messages: int = NEVER  # flush.messages: by default the page cache decides, like Kafka
    flush_ms: int = NEVER  # flush.ms
    retention_ms: int = 7 * 24 * 3600 * 1000  # retention.ms; -1: no time limit
    retention_bytes: int = -1  # retention.bytes; -1: no size limit
    cleanup_policy: tuple[str, ...] = (DELETE,)  # cleanup.policy: delete, compact or both
    delete_retention_ms: int = 24 * 3600 * 1000  # delete.retention.ms: tombstones' lifetime
    min_compaction_lag_ms: int = 0  # min.compaction.lag.ms
    min_cleanable_dirty_ratio: float = 0.5  # min.cleanable.dirty.ratio
    max_message_bytes: int = 1048588  # max.message.bytes: per batch
    message_timestamp_type: str = CREATE_TIME  # message.timestamp.type
    compression_type: str = PRODUCER  # compression.type
    file_delete_delay_ms: int = 60_000  # file.delete.delay.ms
    segment_index_bytes: int = 10 * 1024**2  # segment.index.bytes: a full index rolls
    segment_jitter_ms: int = 0  # segment.jitter.ms
    max_compaction_lag_ms: int = NEVER  # max.compaction.lag.ms
    timestamp_before_max_ms: int = NEVER  # message.timestamp.before.max.ms (CreateTime)
    timestamp_after_max_ms: int = 3600 * 1000  # message.timestamp.after.max.ms (CreateTime)
    gzip_level: int = -1  # compression.gzip.level: -1 is zlib's default
    lz4_level: int = 9  # compression.lz4.level
    zstd_level: int = 3  # compression.zstd.level

    @property
    def deletes(self) -> bool:
        """Whether retention applies (cleanup.policy includes delete)."""
        return DELETE in self.cleanup_policy

    @property
    def roll_ms(self) -> int:
        """Age at which the active segment rolls: a compacted log's records must reach a
        sealed segment within max.compaction.lag.ms (KIP-354)."""
        if self.compacts:
            return min(self.segment_ms, self.max_compaction_lag_ms)
        return self.segment_ms

    @property
    def compacts(self) -> bool:
        """Whether the cleaner compacts this log (cleanup.policy includes compact)."""
        return COMPACT in self.cleanup_policy
