"""Hands out producer ids from blocks reserved in the metadata store.

Like Kafka's producer id manager, it reserves a block at start-up and the next one in the
background once nine tenths of what it holds are used, so InitProducerId keeps answering
while etcd is unreachable for as long as the reserved ids last. With none left it answers
COORDINATOR_LOAD_IN_PROGRESS (retriable) after waiting a moment for the reservation.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from odradek.broker.cluster.metadata_store import PRODUCER_ID_BLOCK_SIZE, MetadataStore
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

RESERVE_RETRY_S = 1.0
# How long an InitProducerId waits for a block before it answers a retriable error.
BLOCK_WAIT_S = 5.0


class ProducerIdAllocator:
    def __init__(self, store: MetadataStore) -> None:
        self._store = store
        self._blocks: list[list[int]] = []  # reserved ranges not used up: [next, end)
        self._reserving: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Reserve the first block in the background."""
        self._reserve_soon()

    async def stop(self) -> None:
        if self._reserving is not None:
            self._reserving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reserving

    async def next_id(self) -> int:
        if not self._blocks:
            self._reserve_soon()
            assert self._reserving is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._reserving), BLOCK_WAIT_S)
            if not self._blocks:
                raise KafkaError(
                    ErrorCode.coordinator_load_in_progress, "no producer id block reserved yet"
                )
        block = self._blocks[0]
        producer_id = block[0]
        block[0] += 1
        if block[0] == block[1]:
            self._blocks.pop(0)
        if sum(end - start for start, end in self._blocks) < PRODUCER_ID_BLOCK_SIZE // 10:
            self._reserve_soon()
        return producer_id

    def _reserve_soon(self) -> None:
        if self._reserving is None or self._reserving.done():
            self._reserving = asyncio.create_task(self._reserve(), name="producer-id-block")

    async def _reserve(self) -> None:
        while True:
            try:
                first = await self._store.reserve_producer_ids(PRODUCER_ID_BLOCK_SIZE)
            except Exception as error:  # etcd unreachable: try again until it answers
                log.debug("cannot reserve producer ids yet: %s", error)
                await asyncio.sleep(RESERVE_RETRY_S)
                continue
            self._blocks.append([first, first + PRODUCER_ID_BLOCK_SIZE])
            return
