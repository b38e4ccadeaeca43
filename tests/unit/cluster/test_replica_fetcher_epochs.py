"""A follower's answer from its leader is applied only if it still follows that partition
in the leader epoch it asked in. Leadership moves while an OffsetForLeaderEpoch or Fetch
request is in flight: a broker that has just become the leader must not truncate its log
to what the old leader said (that would drop acknowledged records), and a partition whose
epoch changed must still be truncated for its new epoch.

The leader here is a scripted peer (the interleaving cannot be forced on a real one): it
answers after the epochs have changed under the request.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.cluster.replica_fetcher import FetcherSettings, ReplicaFetcherManager
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode

KEY = PartitionKey("t", 0)
ME, LEADER = 1, 0


def batch_at(offset: int) -> bytes:
    """A one-record batch as a leader assigned it ``offset`` (the base offset is outside
    the batch's CRC)."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, batch_size=1 << 20)
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"x", headers=[])
    data = bytearray(builder.build())
    data[0:8] = offset.to_bytes(8, "big")
    return bytes(data)


class LeaderChangingMidRequest:
    """Answers the request with ``answer`` after running ``meanwhile``."""

    def __init__(self, meanwhile: Any, answer: Any) -> None:
        self._meanwhile = meanwhile
        self._answer = answer

    async def request(self, api_key: int, version: int, body: Any) -> Any:
        self._meanwhile()
        return self._answer


def offsets_answer(end_offset: int) -> Any:
    result = SimpleNamespace(
        partition=0, error_code=ErrorCode.none, leader_epoch=1, end_offset=end_offset
    )
    return SimpleNamespace(topics=[SimpleNamespace(topic="t", partitions=[result])])


def test_a_truncation_answer_for_an_old_epoch_is_not_applied(tmp_path: Path) -> None:
    async def scenario() -> None:
        log = PartitionLog.open(tmp_path / "t-0", LogConfig())
        partition = Partition(
            KEY, log, PartitionState(0, (LEADER, ME), LEADER, 1, (LEADER, ME)), ME
        )
        for offset in range(3):
            partition.append_as_follower(batch_at(offset), 0)
        manager = ReplicaFetcherManager(FetcherSettings(ME), lambda key: partition)
        fetcher_of_leader = {KEY: (LEADER, 1)}
        manager.update(SimpleNamespace(brokers={}), fetcher_of_leader)  # type: ignore[arg-type]
        [fetcher] = manager._fetchers.values()
        fetcher.task.cancel()

        # the old leader's answer (truncate to 0) arrives after the epoch became 2
        epoch_two = LeaderChangingMidRequest(lambda: fetcher.assign({KEY: 2}), offsets_answer(0))
        await fetcher._truncate(epoch_two)  # type: ignore[arg-type]
        assert partition.log_end_offset == 3
        assert KEY in fetcher._to_truncate  # asked again, for epoch 2

        # ... or after this broker stopped following it (it leads now)
        gone = LeaderChangingMidRequest(lambda: fetcher.assign({}), offsets_answer(0))
        fetcher.assign({KEY: 3})
        await fetcher._truncate(gone)  # type: ignore[arg-type]
        assert partition.log_end_offset == 3

        # an answer for the epoch still followed is applied
        fetcher.assign({KEY: 4})
        await fetcher._truncate(LeaderChangingMidRequest(lambda: None, offsets_answer(1)))  # type: ignore[arg-type]
        assert partition.log_end_offset == 1 and KEY not in fetcher._to_truncate
        await manager.stop()

    asyncio.run(scenario())
