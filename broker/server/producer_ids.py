"""Hands out producer ids from blocks reserved in the metadata store."""

from __future__ import annotations

import asyncio

from odradek.broker.cluster.metadata_store import PRODUCER_ID_BLOCK_SIZE, MetadataStore


class ProducerIdAllocator:
    def __init__(self, store: MetadataStore) -> None:
        self._store = store
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def next_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                self._next = await self._store.reserve_producer_ids(PRODUCER_ID_BLOCK_SIZE)
                self._end = self._next + PRODUCER_ID_BLOCK_SIZE
            producer_id = self._next
            self._next += 1
            return producer_id
