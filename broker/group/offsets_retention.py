"""Which committed offsets have outlived ``offsets.retention.minutes`` (KIP-211 rules)."""

from __future__ import annotations

from collections.abc import Callable

from odradek.broker.group.group import Group, TopicPartition
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.record_format import CommittedOffset

_Since = Callable[[CommittedOffset], int]


def expired_offsets(group: Group, now_ms: int, retention_ms: int) -> list[TopicPartition]:
    """Offsets to delete now.

    An empty group with a protocol loses all its offsets ``retention_ms`` after it
    became empty; a group that only stores offsets (standalone ``assign()``
    consumers) loses each offset that long after its commit; a consumer group
    with members (classic or KIP-848) loses only the offsets of topics none of them
    subscribes to.
    An explicit expiry time (OffsetCommit v2-v4 retention) wins over all that.
    """
    consumer = group.consumer
    if consumer is not None:
        if not consumer.members:
            return _older_than(group, now_ms, retention_ms, lambda _: group.state_timestamp)
        return [
            key
            for key in _older_than(group, now_ms, retention_ms, lambda o: o.commit_timestamp)
            if not consumer.subscribes_to(key[0])
        ]
    if group.protocol_type is not None and group.is_(GroupState.EMPTY):
        return _older_than(group, now_ms, retention_ms, lambda _: group.state_timestamp)
    if group.protocol_type is None:
        return _older_than(group, now_ms, retention_ms, lambda o: o.commit_timestamp)
    subscribed = group.subscribed_topics() if group.is_(GroupState.STABLE) else None
    if subscribed is None:
        return []
    return [
        key
        for key in _older_than(group, now_ms, retention_ms, lambda o: o.commit_timestamp)
        if key[0] not in subscribed
    ]


def _older_than(
    group: Group, now_ms: int, retention_ms: int, since: _Since
) -> list[TopicPartition]:
    expired = []
    for key, offset in group.offsets.items():
        if offset.expire_timestamp >= 0:
            deadline = offset.expire_timestamp
        else:
            deadline = max(since(offset), offset.commit_timestamp) + retention_ms
        if deadline <= now_ms:
            expired.append(key)
    return expired
