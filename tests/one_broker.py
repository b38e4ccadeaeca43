"""One broker's storage and metadata without sockets, for coordinator unit tests: its log
manager on a data directory, the embedded metadata store, and replicas that follow it, with
one data topic created."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.cluster.topic_planning import plan_topic
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.log_manager import LogManager


@dataclass(frozen=True)
class OneBroker:
    store: EmbeddedMetadataStore
    replicas: ReplicaManager


@asynccontextmanager
async def one_broker(data_dir: Path, topic: str, partitions: int = 2) -> AsyncIterator[OneBroker]:
    """Broker 0 on ``data_dir`` (its state kept there across uses), ``topic`` created."""
    logs = LogManager(data_dir)
    logs.load()
    store = EmbeddedMetadataStore(data_dir, BrokerRegistration(0, "127.0.0.1", 9092))
    replicas = ReplicaManager(0, logs, lambda _: LogConfig())
    replicas.apply(None, store.image)
    store.subscribe(replicas.apply)
    if topic not in store.image.topics:
        await store.create_topic(plan_topic(store.image, topic, partitions, 1))
    try:
        yield OneBroker(store, replicas)
    finally:
        logs.close_all()
