"""A broker whose etcd member dies as etcd loses its quorum still learns what the surviving
member holds (found by the long soak: the preferred-leader election just before a quorum
loss reached one broker only after quorum returned, so the partition it now led had no
leader for the whole outage).

Broker 1 watches member 1, which is paused: the topic broker 0 (the controller, watching
member 0) creates meanwhile is committed by members 0 and 2 and reaches broker 1 only when
its watch breaks. Members 2 and 1 are then killed: with member 0 alone there is no quorum,
so no consistent read can answer, but a watch needs none, and broker 1 resumes its watch on
member 0 and sees the topic.
"""

from __future__ import annotations

import signal
import tempfile
import time
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster
from confluent_kafka.admin import AdminClient, NewTopic

from odradek.cli.etcd_process import EtcdCluster

SEEN_WITHIN_S = 10


@pytest.mark.timeout(180)
def test_a_broker_whose_member_died_with_the_quorum_resumes_its_watch_on_a_survivor(
    tmp_path: Path,
) -> None:
    etcd = EtcdCluster(Path(tempfile.mkdtemp(prefix="odradek-etcd-", dir=tmp_path))).start()
    m0, m1, m2 = (member.endpoint for member in etcd.members)
    cluster = Cluster(
        tmp_path / "cluster",
        etcd,
        2,
        settings={"cluster.name": unique_name("watch")},
        per_node={
            0: {"etcd.endpoints": f"{m0},{m2},{m1}"},
            1: {"etcd.endpoints": f"{m1},{m0},{m2}"},
        },
    )
    try:
        cluster.brokers[0].start()  # first, so that it takes the controller's lease
        cluster.brokers[1].start()
        assert cluster.controller() == 0
        etcd.members[1].process.signal(signal.SIGSTOP)
        topic = unique_name("created-while-paused")
        admin = AdminClient({"bootstrap.servers": cluster.brokers[0].bootstrap, "log_level": 0})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
        assert topic not in topics_seen_by(cluster, 1), "broker 1's watch was not silent"

        etcd.members[2].kill()
        etcd.members[1].kill()  # broker 1's watch breaks; member 0 alone has no quorum
        deadline = time.monotonic() + SEEN_WITHIN_S
        while topic not in topics_seen_by(cluster, 1):
            assert time.monotonic() < deadline, f"broker 1 never saw {topic} without a quorum"
            time.sleep(0.2)
        log = cluster.brokers[1].log_tail(400)
        assert "metadata watch interrupted" in log and "resuming from another member" in log
    finally:
        cluster.close()
        etcd.kill()


def topics_seen_by(cluster: Cluster, node: int) -> set[str]:
    return {p.topic for p in cluster.state(via=node).partitions}
