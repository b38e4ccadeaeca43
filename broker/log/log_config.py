"""Per-topic log settings, named and defaulted as Kafka's topic configs."""

from __future__ import annotations

from dataclasses import dataclass

NEVER = 2**63 - 1


@dataclass(frozen=True)
class LogConfig:
    """Kafka's topic-level log settings; retention and compaction come later."""

    segment_bytes: int = 1024**3  # segment.bytes
    segment_ms: int = 7 * 24 * 3600 * 1000  # segment.ms
    index_interval_bytes: int = 4096  # index.interval.bytes
    flush_messages: int = NEVER  # flush.messages: by default the page cache decides, like Kafka
    flush_ms: int = NEVER  # flush.ms
