"""Writing a transaction's markers to the leaders of its partitions, retrying until each
has it (Kafka's coordinator never gives up on a prepared transaction): a partition led here
gets it through ``Partition.append_marker``, as WriteTxnMarkers would."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.transaction_markers import TransactionMarker

log = logging.getLogger(__name__)
RETRY_BACKOFF_S = 0.1
# what stops the markers of a transaction for a partition, as Kafka's coordinator stops
_GIVE_UP = (ErrorCode.invalid_producer_epoch, ErrorCode.transaction_coordinator_fenced)


class LocalMarkerWriter:
    """Markers for partitions this broker leads."""

    def __init__(
        self, replicas: ReplicaManager, min_insync: Callable[[str], int], timeout_s: float
    ) -> None:
        self._replicas = replicas
        self._min_insync = min_insync
        self._timeout_s = timeout_s

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
                partition = self._replicas.get(topic, index)
                info = partition.append_marker(marker, self._min_insync(topic))
                await partition.wait_for_high_watermark(info.last_offset + 1, self._timeout_s)
                return
            except KafkaError as error:
                if error.code in _GIVE_UP:
                    log.warning("%s-%d: marker not written: %s", topic, index, error.message)
                    return
            await asyncio.sleep(RETRY_BACKOFF_S)
