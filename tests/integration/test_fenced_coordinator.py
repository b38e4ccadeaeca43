"""A group coordinator whose etcd session lapses keeps its groups (issue 21, the long soak).

A paused etcd leader revokes leases of live brokers (docs/cluster.md#etcd-faults): the
broker registers again at once and no leadership moves. The coordinator used to drop its
groups on the fence and read the whole offsets partition again once unfenced; the soak's
member, which commits after every batch, lost its session on such reloads. Now it answers
NOT_COORDINATOR while fenced and then serves the state it had loaded: the member keeps its
membership and reads on, and the broker does not load the partition again.
"""

from __future__ import annotations

import asyncio
import time

from cluster_harness import ClusterFactory
from confluent_kafka.admin import AdminClient
from group_members import GROUP_SETTINGS, MemberFactory, produce, wait_until

from odradek.broker.cluster.etcd_client import EtcdClient
from odradek.cli.etcd_process import EtcdProcess

PARTITIONS = 3
PER_PARTITION = 50


def test_a_coordinator_whose_etcd_session_lapses_keeps_its_group_without_reloading(
    etcd: EtcdProcess, cluster_factory: ClusterFactory, spawn: MemberFactory
) -> None:
    cluster = cluster_factory(brokers=3, settings=GROUP_SETTINGS)
    topic = cluster.create_topic(PARTITIONS, 3)
    group = f"fenced-{topic}"
    member = spawn("confluent-kafka", cluster.bootstrap, topic, group)
    produce(cluster.bootstrap, topic, "before", PER_PARTITION, PARTITIONS)
    wait_until(lambda: member.records_read() >= PARTITIONS * PER_PARTITION, "records read")
    member_id, partitions, _, _ = member.snapshot()
    assert partitions == list(range(PARTITIONS))
    assignments = member.assignments
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    node = admin.describe_consumer_groups([group])[group].result(10).coordinator.id
    coordinator = cluster.brokers[node]
    loads_before = coordinator.log_path.read_text().count("loaded 1 groups")
    unfenced = f"broker {node} unfenced"
    unfenced_before = coordinator.log_path.read_text().count(unfenced)

    asyncio.run(revoke_registration(etcd, coordinator.settings["cluster.name"], node))
    wait_until(
        lambda: coordinator.log_path.read_text().count(unfenced) > unfenced_before,
        f"broker {node} registered and unfenced again",
    )

    produce(cluster.bootstrap, topic, "after", PER_PARTITION, PARTITIONS)
    wait_until(lambda: member.records_read() >= 2 * PARTITIONS * PER_PARTITION, "read on")
    time.sleep(1.0)  # a reload would have logged by now
    log = coordinator.log_path.read_text()
    assert log.count("loaded 1 groups") == loads_before, coordinator.describe()
    assert "their state is kept" in log and "again, as loaded" in log, coordinator.describe()
    assert member.snapshot()[:2] == (member_id, partitions), "the member lost its membership"
    assert member.assignments == assignments


async def revoke_registration(etcd: EtcdProcess, cluster_name: str, node: int) -> None:
    """Revoke the lease of broker ``node``'s registration, as a paused etcd leader does."""
    client = EtcdClient(etcd.endpoints)
    try:
        registration = await client.get(f"/odradek/{cluster_name}/brokers/{node}")
        assert registration is not None and registration.lease
        await client.revoke(registration.lease)
    finally:
        await client.close()
