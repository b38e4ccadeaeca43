"""The high watermark of any partition, for share-group lag: this broker's own when it
leads the partition, else the leader's answer to ListOffsets (latest)."""

from __future__ import annotations

import asyncio

from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError

LIST_OFFSETS_VERSION = 7
LATEST_TIMESTAMP = -1


class PartitionEnds:
    def __init__(
        self, node_id: int, store: MetadataStore, replicas: ReplicaManager, peers: PeerPool
    ) -> None:
        self._node_id = node_id
        self._store = store
        self._replicas = replicas
        self._peers = peers

    async def high_watermark(self, topic: str, index: int) -> int | None:
        """None when the partition or its leader cannot be reached."""
        local = self._replicas.find(PartitionKey(topic, index))
        if local is not None and local.is_leader:
            return local.high_watermark
        metadata = self._store.image.topics.get(topic)
        if metadata is None or not 0 <= index < len(metadata.partitions):
            return None
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [
                {
                    "name": topic,
                    "partitions": [
                        {
                            "partition_index": index,
                            "current_leader_epoch": -1,
                            "timestamp": LATEST_TIMESTAMP,
                        }
                    ],
                }
            ],
        }
        leader = metadata.partitions[index].leader
        try:
            answer = await self._peers.request(
                leader, ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION, body
            )
        except (KafkaError, OSError, TimeoutError, asyncio.IncompleteReadError):
            return None
        found = answer.topics[0].partitions[0]
        return int(found.offset) if found.error_code is ErrorCode.none else None
