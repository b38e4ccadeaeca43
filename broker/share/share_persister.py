"""How a partition leader reads and writes its share-partitions' states: at the share
coordinator of each state's key, this broker's own or another broker's (through
ReadShareGroupState and WriteShareGroupState on the inter-broker listener, as Kafka's
DefaultStatePersister). A coordinator that moved or is still loading is asked again until
the write timeout has passed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.share.share_coordinator import ShareCoordinator
from odradek.broker.share.share_state import (
    DeliveryState,
    SharePartitionKey,
    ShareState,
    StateBatch,
)

T = TypeVar("T")
STATE_API_VERSION = 0
NEVER_WRITTEN = -1
"""The state epoch ReadShareGroupState answers for a share-partition with no state."""
_RETRIABLE = {
    ErrorCode.not_coordinator,
    ErrorCode.coordinator_load_in_progress,
    ErrorCode.coordinator_not_available,
}
_BACKOFF_S = 0.1


class SharePersister:
    def __init__(self, node_id: int, coordinator: ShareCoordinator, peers: PeerPool) -> None:
        self._node_id = node_id
        self._coordinator = coordinator
        self._peers = peers
        self._timeout_s = coordinator.config.write_timeout_ms / 1000

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> ShareState | None:
        async def read_local() -> ShareState | None:
            return self._coordinator.read(key)

        async def read_remote(broker: int) -> ShareState | None:
            partition = {"partition": key.partition, "leader_epoch": leader_epoch}
            found = await self._partition_request(
                broker, ApiKey.READ_SHARE_GROUP_STATE, key, partition
            )
            if found.state_epoch == NEVER_WRITTEN:
                return None
            batches = batches_of(found.state_batches)
            return ShareState(found.start_offset, found.state_epoch, leader_epoch, batches)

        return await self._at_coordinator(key, read_local, read_remote)

    async def write(self, key: SharePartitionKey, state: ShareState) -> None:
        async def write_local() -> None:
            await self._coordinator.write(key, state)

        async def write_remote(broker: int) -> None:
            partition = {
                "partition": key.partition,
                "state_epoch": state.state_epoch,
                "leader_epoch": state.leader_epoch,
                "start_offset": state.start_offset,
                "state_batches": wire_batches(state.batches),
            }
            await self._partition_request(broker, ApiKey.WRITE_SHARE_GROUP_STATE, key, partition)

        await self._at_coordinator(key, write_local, write_remote)

    async def initialize(self, key: SharePartitionKey, start_offset: int) -> None:
        """Start the share-partition afresh at ``start_offset``, in a new state epoch."""
        current = await self.read(key, -1)
        state_epoch = 1 if current is None else current.state_epoch + 1

        async def initialize_local() -> None:
            await self._coordinator.initialize(key, state_epoch, start_offset)

        async def initialize_remote(broker: int) -> None:
            partition = {
                "partition": key.partition,
                "state_epoch": state_epoch,
                "start_offset": start_offset,
            }
            await self._partition_request(
                broker, ApiKey.INITIALIZE_SHARE_GROUP_STATE, key, partition
            )

        await self._at_coordinator(key, initialize_local, initialize_remote)

    async def delete(self, key: SharePartitionKey) -> None:
        async def delete_local() -> None:
            await self._coordinator.delete(key)

        async def delete_remote(broker: int) -> None:
            partition = {"partition": key.partition}
            await self._partition_request(broker, ApiKey.DELETE_SHARE_GROUP_STATE, key, partition)

        await self._at_coordinator(key, delete_local, delete_remote)

    async def _partition_request(
        self, broker: int, api_key: ApiKey, key: SharePartitionKey, partition: dict[str, Any]
    ) -> Any:
        """A share-state request about one share-partition; its partition's answer."""
        answer = await self._peers.request(
            broker,
            api_key,
            STATE_API_VERSION,
            {
                "group_id": key.group_id,
                "topics": [{"topic_id": key.topic_id, "partitions": [partition]}],
            },
        )
        found = answer.results[0].partitions[0]
        _raise_for(found.error_code, found.error_message)
        return found

    async def _at_coordinator(
        self,
        key: SharePartitionKey,
        local: Callable[[], Awaitable[T]],
        remote: Callable[[int], Awaitable[T]],
    ) -> T:
        deadline = time.monotonic() + self._timeout_s
        while True:
            try:
                broker = (await self._coordinator.find_coordinator(key)).node_id
                if broker == self._node_id:
                    return await local()
                return await remote(broker)
            except KafkaError as error:
                if error.code not in _RETRIABLE or time.monotonic() > deadline:
                    raise
            except (OSError, TimeoutError, asyncio.IncompleteReadError) as error:
                if time.monotonic() > deadline:
                    raise KafkaError(
                        ErrorCode.coordinator_not_available,
                        f"the share coordinator of {key.coordinator_key()}: {error}",
                    ) from None
            await asyncio.sleep(_BACKOFF_S)


def wire_batches(batches: Iterable[StateBatch]) -> list[dict[str, int]]:
    """State batches as the share-state APIs carry them."""
    return [
        {
            "first_offset": batch.first_offset,
            "last_offset": batch.last_offset,
            "delivery_state": batch.delivery_state,
            "delivery_count": batch.delivery_count,
        }
        for batch in batches
    ]


def batches_of(wire: Iterable[Any]) -> tuple[StateBatch, ...]:
    """The state batches of a share-state API's message; INVALID_REQUEST for an unknown
    delivery state."""
    try:
        return tuple(
            StateBatch(
                b.first_offset, b.last_offset, DeliveryState(b.delivery_state), b.delivery_count
            )
            for b in wire
        )
    except ValueError as error:
        raise KafkaError(ErrorCode.invalid_request, f"state batch: {error}") from None


def _raise_for(code: ErrorCode, message: str | None) -> None:
    if code is not ErrorCode.none:
        raise KafkaError(code, message or code.name)
