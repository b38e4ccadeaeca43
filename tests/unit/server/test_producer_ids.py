"""Producer ids come from blocks reserved ahead, so InitProducerId outlives an etcd outage."""

from __future__ import annotations

import asyncio

import pytest

from odradek.broker.cluster.metadata_store import PRODUCER_ID_BLOCK_SIZE
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server import producer_ids
from odradek.broker.server.producer_ids import ProducerIdAllocator


class Store:
    """Reserves blocks in order while ``reachable``; raises like an unreachable etcd."""

    def __init__(self) -> None:
        self.reachable = True
        self.reserved = 0

    async def reserve_producer_ids(self, count: int) -> int:
        if not self.reachable:
            raise ConnectionError("etcd unreachable")
        first, self.reserved = self.reserved, self.reserved + count
        return first


def test_ids_run_on_from_the_block_reserved_ahead_while_the_store_is_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(producer_ids, "BLOCK_WAIT_S", 0.2)
    monkeypatch.setattr(producer_ids, "RESERVE_RETRY_S", 0.01)

    async def scenario() -> None:
        store = Store()
        allocator = ProducerIdAllocator(store)  # type: ignore[arg-type]
        allocator.start()
        await asyncio.sleep(0.01)
        used = PRODUCER_ID_BLOCK_SIZE - PRODUCER_ID_BLOCK_SIZE // 10 + 1
        assert [await allocator.next_id() for _ in range(used)] == list(range(used))
        await asyncio.sleep(0.01)  # the next block, reserved in the background
        store.reachable = False
        for expected in range(used, 2 * PRODUCER_ID_BLOCK_SIZE):
            assert await allocator.next_id() == expected
        with pytest.raises(KafkaError) as refused:
            await allocator.next_id()
        assert refused.value.code is ErrorCode.coordinator_load_in_progress
        store.reachable = True
        assert await allocator.next_id() == 2 * PRODUCER_ID_BLOCK_SIZE
        await allocator.stop()

    asyncio.run(scenario())
