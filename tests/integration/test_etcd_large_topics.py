"""Topics of more partitions than one etcd transaction takes (``--max-txn-ops``, 128): their
keys are written in steps under a leased lock, and no broker's image shows the topic
before its last step."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest
from test_etcd_image_reuse import SESSION_TTL_S, topic, wait_for, whole_read

from odradek.broker.cluster.etcd_client import EtcdClient, put_op
from odradek.broker.cluster.etcd_store import EtcdMetadataStore
from odradek.broker.cluster.metadata_image import BrokerRegistration, MetadataImage
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.cli.etcd_process import EtcdProcess

CLUSTER = "large"
DEAD_SESSION_TTL_S = 300
ORPHAN_STATE = b'{"replicas": [7], "leader": 7, "leader_epoch": 3, "isr": [7]}'


def store_of(etcd: EtcdProcess, node_id: int) -> EtcdMetadataStore:
    broker = BrokerRegistration(node_id, "127.0.0.1", 9092 + node_id, directory_id=f"d{node_id}")
    return EtcdMetadataStore(
        EtcdClient([etcd.endpoint]), CLUSTER, broker, SESSION_TTL_S, SESSION_TTL_S / 3
    )


@contextlib.asynccontextmanager
async def two_brokers(
    etcd: EtcdProcess,
) -> AsyncIterator[tuple[EtcdMetadataStore, EtcdMetadataStore]]:
    """The stores of two brokers: one writes, the other watches."""
    async with contextlib.AsyncExitStack() as stack:
        stores = []
        for node_id in (1, 2):
            store = store_of(etcd, node_id)
            await store.start()
            stack.push_async_callback(store.stop)
            stores.append(store)
        yield stores[0], stores[1]


def partition_counts(store: EtcdMetadataStore, name: str) -> list[int]:
    """Every partition count of ``name`` the images of ``store`` show from now on."""
    counts: list[int] = []

    def record(old: MetadataImage, new: MetadataImage) -> None:
        if name in new.topics:
            counts.append(len(new.topics[name].partitions))

    store.subscribe(record)
    return counts


def test_a_topic_of_thousands_of_partitions_appears_whole_on_every_broker(
    etcd: EtcdProcess,
) -> None:
    async def scenario() -> None:
        async with two_brokers(etcd) as (creator, watcher):
            seen = partition_counts(watcher, "wide")
            created = topic("wide", 1000)
            await creator.create_topic(created)
            assert creator.image.topics["wide"] == created
            await wait_for(watcher, lambda image: "wide" in image.topics)
            await creator.add_partitions("wide", topic("wide", 1300).partitions[1000:])
            await wait_for(watcher, lambda image: len(image.topics["wide"].partitions) == 1300)
            assert set(seen) == {1000, 1300}, sorted(set(seen))
            assert (await whole_read(etcd, CLUSTER)).topics == watcher.image.topics
            # no lock left behind: a small write of the topic goes through at once
            await creator.add_partitions("wide", topic("wide", 1301).partitions[1300:])
            assert len(creator.image.topics["wide"].partitions) == 1301
            with pytest.raises(KafkaError) as again:
                await watcher.create_topic(topic("wide", 500))
            assert again.value.code == ErrorCode.topic_already_exists

    asyncio.run(scenario())


def test_a_creation_cut_short_blocks_its_name_until_its_session_ends_and_shows_nothing(
    etcd: EtcdProcess,
) -> None:
    """A broker that died mid-creation leaves its lock (leased: gone with its session) and
    some partition keys: meanwhile the name is taken; afterwards the name is free, and the
    keys it left are overwritten or never shown."""

    async def scenario() -> None:
        async with two_brokers(etcd) as (creator, watcher):
            client = EtcdClient([etcd.endpoint])
            lease = await client.grant_lease(DEAD_SESSION_TTL_S)  # outlives the test
            prefix = f"/odradek/{CLUSTER}/"
            await client.put(prefix + "creating/cut", uuid.uuid4().hex.encode(), lease)
            for partition in range(300):
                key = f"{prefix}partitions/cut/{partition}"
                await client.txn([], [put_op(key, ORPHAN_STATE)])
            for size in (3, 200):  # one transaction, and steps
                with pytest.raises(KafkaError) as taken:
                    await creator.create_topic(topic("cut", size))
                assert taken.value.code == ErrorCode.topic_already_exists
            assert "cut" not in watcher.image.topics
            await client.revoke(lease)
            await client.close()
            created = topic("cut", 150)
            await creator.create_topic(created)
            await wait_for(watcher, lambda image: "cut" in image.topics)
            assert watcher.image.topics["cut"] == created  # none of the orphans' leader 7
            assert (await whole_read(etcd, CLUSTER)).topics["cut"] == created

    asyncio.run(scenario())
