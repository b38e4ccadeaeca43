"""Builders for group unit tests: members with consumer-protocol subscriptions."""

from __future__ import annotations

from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata

from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.member import Member


def subscription(*topics: str) -> bytes:
    """A consumer's subscription as aiokafka encodes it."""
    encoded: bytes = ConsumerProtocolMemberMetadata(0, list(topics), b"").encode()
    return encoded


def member(
    member_id: str,
    protocols: tuple[str, ...] = ("range",),
    topics: tuple[str, ...] = ("t",),
    instance: str | None = None,
) -> Member:
    return Member(
        member_id,
        instance,
        "client",
        "/127.0.0.1",
        rebalance_timeout_ms=1000,
        session_timeout_ms=1000,
        protocol_type="consumer",
        protocols=tuple((name, subscription(*topics)) for name in protocols),
    )


def group_config(**changes: int) -> GroupConfig:
    """Settings with short timers, for tests on a real event loop."""
    settings = {
        "offsets_topic_partitions": 50,
        "offsets_topic_replication_factor": 1,
        "offsets_retention_ms": 60_000,
        "offsets_retention_check_interval_ms": 60_000,
        "initial_rebalance_delay_ms": 0,
        "min_session_timeout_ms": 10,
        "max_session_timeout_ms": 60_000,
        "max_size": 100,
        "offset_metadata_max_bytes": 4096,
        "commit_timeout_ms": 1000,
    }
    settings.update(changes)
    return GroupConfig(**settings)
