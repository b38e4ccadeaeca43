"""One partition replica on this broker: its log, its leadership state and the
waiters that a change of its high watermark wakes (long-polling fetches)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.log.partition_log import AppendInfo, PartitionLog, ReadResult
from odradek.broker.protocol.errors import ErrorCode, KafkaError


@dataclass(frozen=True)
class PartitionKey:
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class Partition:
    """Serves produce and fetch for one replica; only the leader accepts produce."""

    def __init__(self, key: PartitionKey, log: PartitionLog, state: PartitionState, node_id: int):
        self.key = key
        self.log = log
        self.state = state
        self._node_id = node_id
        self._changed: asyncio.Future[None] | None = None
        self._maybe_advance_high_watermark()

    @property
    def is_leader(self) -> bool:
        return self.state.leader == self._node_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def check_leader(self, current_leader_epoch: int = -1) -> None:
        """Raise the error Kafka gives a client that talks to the wrong replica."""
        if current_leader_epoch >= 0:
            if current_leader_epoch < self.state.leader_epoch:
                raise KafkaError(ErrorCode.fenced_leader_epoch)
            if current_leader_epoch > self.state.leader_epoch:
                raise KafkaError(ErrorCode.unknown_leader_epoch)
        if not self.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower)

    def append_as_leader(self, records: bytes, required_acks: int, min_insync: int) -> AppendInfo:
        self.check_leader()
        if required_acks == -1 and len(self.state.isr) < min_insync:
            raise KafkaError(
                ErrorCode.not_enough_replicas,
                f"{len(self.state.isr)} in-sync replicas, min.insync.replicas is {min_insync}",
            )
        info = self.log.append_as_leader(records, self.state.leader_epoch)
        self._maybe_advance_high_watermark()
        return info

    def read(self, fetch_offset: int, max_bytes: int, committed_only: bool) -> ReadResult:
        limit = self.log.high_watermark if committed_only else None
        return self.log.read(fetch_offset, max_bytes, max_offset=limit)

    def wait_for_change(self) -> asyncio.Future[None]:
        """A future resolved at the next high watermark move (shared by all waiters)."""
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        return self._changed

    def _maybe_advance_high_watermark(self) -> None:
        # With only the leader in the ISR the high watermark is its log end; followers'
        # fetch positions take part once replication tracks them.
        if self.state.isr == (self._node_id,) and self.log.high_watermark < self.log.log_end_offset:
            self.log.high_watermark = self.log.log_end_offset
            self._notify()

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set_result(None)
            self._changed = None
