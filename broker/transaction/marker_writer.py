"""Writing a transaction's markers to the leaders of its partitions, retrying until each
has it (Kafka's coordinator never gives up on a prepared transaction): a partition led here
gets it through ``Partition.append_marker``; those led by another broker through one
WriteTxnMarkers v1 per broker on the inter-broker listener, on connections of their own."""

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
TopicPartition = tuple[str, int]


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
        """Until every partition has the marker: one WriteTxnMarkers per other leader with
        all its partitions (as Kafka's marker channel batches them), the partitions led
        here appended directly; what fails is sent again."""
        remaining = {(topic, index) for topic, indexes in partitions.items() for index in indexes}
        while remaining:
            by_leader: dict[int, list[TopicPartition]] = {}
            unknown = set()
            for key in remaining:
                try:
                    by_leader.setdefault(self._leader(*key), []).append(key)
                except KafkaError:
                    unknown.add(key)  # a partition whose metadata is not here yet
            retries = await asyncio.gather(
                *(self._write_to(leader, marker, keys) for leader, keys in by_leader.items())
            )
            remaining = unknown.union(*retries)
            if remaining:
                await asyncio.sleep(RETRY_BACKOFF_S)

    async def _write_to(
        self, leader: int, marker: TransactionMarker, keys: list[TopicPartition]
    ) -> set[TopicPartition]:
        """Write the marker to these partitions of one leader; those to retry."""
        if leader == self._node_id:
            written = await asyncio.gather(*(self._write_here(marker, *key) for key in keys))
            return {key for key, code in zip(keys, written, strict=True) if self._retry(key, code)}
        try:
            codes = await self._write_there(leader, marker, keys)
        except KafkaError as error:
            codes = dict.fromkeys(keys, error.code)
        except (OSError, TimeoutError, asyncio.IncompleteReadError) as error:
            log.info("markers to broker %d to be sent again: %s", leader, error)
            return set(keys)
        return {
            key for key in keys if self._retry(key, codes.get(key, ErrorCode.unknown_server_error))
        }

    @staticmethod
    def _retry(key: TopicPartition, code: ErrorCode) -> bool:
        if code in _GIVE_UP:
            log.warning("%s-%d: marker not written: %s", key[0], key[1], code.name)
        return code is not ErrorCode.none and code not in _GIVE_UP

    def _leader(self, topic: str, index: int) -> int:
        found = self._store.image.topics.get(topic)
        if found is None or not 0 <= index < len(found.partitions):
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        return found.partitions[index].leader

    async def _write_here(self, marker: TransactionMarker, topic: str, index: int) -> ErrorCode:
        try:
            partition = self._replicas.get(topic, index)
            info = partition.append_marker(marker, self._min_insync(topic))
            await partition.wait_for_high_watermark(info.last_offset + 1, self._timeout_s)
            partition.check_enough_replicas_after_append(self._min_insync(topic))
        except KafkaError as error:
            return error.code
        except TimeoutError:
            return ErrorCode.request_timed_out
        self._written_here(topic, index, marker)
        return ErrorCode.none

    async def _write_there(
        self, leader: int, marker: TransactionMarker, keys: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        topics: dict[str, list[int]] = {}
        for topic, index in keys:
            topics.setdefault(topic, []).append(index)
        body = {
            "markers": [
                {
                    "producer_id": marker.producer_id,
                    "producer_epoch": marker.producer_epoch,
                    "transaction_result": marker.type is MarkerType.COMMIT,
                    "topics": [
                        {"name": topic, "partition_indexes": indexes}
                        for topic, indexes in topics.items()
                    ],
                    "coordinator_epoch": marker.coordinator_epoch,
                }
            ]
        }
        answer = await self._peers.request(
            leader, ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, body
        )
        return {
            (topic.name, result.partition_index): result.error_code
            for topic in answer.markers[0].topics
            for result in topic.partitions
        }
