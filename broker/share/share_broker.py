"""The share-group machinery of one broker: the share coordinator of the
``__share_group_state`` partitions it leads, the share-partitions of the topic partitions
it leads, and its consumers' share sessions."""

from __future__ import annotations

from collections.abc import Callable

from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.share.partition_ends import PartitionEnds
from odradek.broker.share.share_config import ShareConfig
from odradek.broker.share.share_coordinator import ShareCoordinator
from odradek.broker.share.share_partition_manager import ShareGroupSettings, SharePartitionManager
from odradek.broker.share.share_persister import SharePersister
from odradek.broker.share.share_sessions import ShareSession, ShareSessions
from odradek.broker.share.share_state import SharePartitionKey


class ShareBroker:
    def __init__(
        self,
        node_id: int,
        config: ShareConfig,
        store: MetadataStore,
        replicas: ReplicaManager,
        peers: PeerPool,
        settings: Callable[[str], ShareGroupSettings],
    ) -> None:
        self.coordinator = ShareCoordinator(config, store, replicas)
        self.persister = SharePersister(node_id, self.coordinator, peers)
        self.partitions = SharePartitionManager(config, replicas, self.persister, settings)
        self.sessions = ShareSessions(config.max_share_sessions)
        self.partition_ends = PartitionEnds(node_id, store, replicas, peers)
        self.settings = settings

    def release(self, session: ShareSession) -> None:
        """An ended session's member gives back the records it still holds; the
        share-partitions no other session uses are unloaded."""
        keys = [SharePartitionKey(session.group_id, t, p) for t, p in session.partitions]
        self.partitions.release(session.member_id, keys)
        in_use = self.sessions.partitions_in_use(session.group_id)
        self.partitions.unload_idle(
            key for key in keys if (key.topic_id, key.partition) not in in_use
        )

    def connection_closed(self, connection_id: int) -> None:
        for session in self.sessions.close_connection(connection_id):
            self.release(session)

    def start(self) -> None:
        """After the replicas: the coordinator loads the state partitions they hold."""
        self.coordinator.start()
        self.partitions.start()

    async def stop(self) -> None:
        await self.partitions.stop()
        await self.coordinator.stop()
