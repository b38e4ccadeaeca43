"""Writing a transaction's markers to the leaders of its partitions, retrying until each
has it (Kafka's coordinator never gives up on a prepared transaction): a partition led here
gets it through ``Partition.append_marker``; one led by another broker through
WriteTxnMarkers v1 on the inter-broker listener, one connection per broker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.transaction_markers import MarkerType, TransactionMarker

log = logging.getLogger(__name__)
RETRY_BACKOFF_S = 0.1
WRITE_TXN_MARKERS_VERSION = 1
# what stops the markers of a transaction for a partition, as Kafka's coordinator stops
_GIVE_UP = (ErrorCode.invalid_producer_epoch, ErrorCode.transaction_coordinator_fenced)


class MarkerWriter:
    def __init__(
        self,
        node_id: int,
        store: MetadataStore,
        replicas: ReplicaManager,
        min_insync: Callable[[str], int],
        timeout_s: float,
        peers: PeerPool,
        written_here: Callable[[str, int, TransactionMarker], None],
    ) -> None:
        """``written_here(topic, partition, marker)`` is told of each marker this broker
        appended itself (the group coordinator completes TxnOffsetCommit's offsets)."""
        self._node_id = node_id
        self._written_here = written_here
        self._store = store
        self._replicas = replicas
        self._min_insync = min_insync
        self._timeout_s = timeout_s
        self._peers = peers

    async def write(
        self, marker: TransactionMarker, partitions: Mapping[str, frozenset[int]]
    ) -> None:
        await asyncio.gather(
            *(
                self._write_one(marker, topic, index)
                for topic, indexes in partitions.items()
                for index in indexes
            )
        )

    async def _write_one(self, marker: TransactionMarker, topic: str, index: int) -> None:
        while True:
            try:
                leader = self._leader(topic, index)
                if leader == self._node_id:
                    await self._write_here(marker, topic, index)
                else:
                    await self._write_there(leader, marker, topic, index)
                return
            except KafkaError as error:
                if error.code in _GIVE_UP:
                    log.warning("%s-%d: marker not written: %s", topic, index, error.message)
                    return
            except (OSError, TimeoutError, asyncio.IncompleteReadError) as error:
                log.info("%s-%d: marker to be sent again: %s", topic, index, error)
            await asyncio.sleep(RETRY_BACKOFF_S)

    def _leader(self, topic: str, index: int) -> int:
        found = self._store.image.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        return found.partitions[index].leader

    async def _write_here(self, marker: TransactionMarker, topic: str, index: int) -> None:
        partition = self._replicas.get(topic, index)
        info = partition.append_marker(marker, self._min_insync(topic))
        await partition.wait_for_high_watermark(info.last_offset + 1, self._timeout_s)
        partition.check_enough_replicas_after_append(self._min_insync(topic))
        self._written_here(topic, index, marker)

    async def _write_there(
        self, leader: int, marker: TransactionMarker, topic: str, index: int
    ) -> None:
        body = {
            "markers": [
                {
                    "producer_id": marker.producer_id,
                    "producer_epoch": marker.producer_epoch,
                    "transaction_result": marker.type is MarkerType.COMMIT,
                    "topics": [{"name": topic, "partition_indexes": [index]}],
                    "coordinator_epoch": marker.coordinator_epoch,
                }
            ]
        }
        answer = await self._peers.request(
            leader, ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body
        )
        code = answer.markers[0].topics[0].partitions[0].error_code
        if code is not ErrorCode.none:
            raise KafkaError(code, f"broker {leader} answered {code.name}")
