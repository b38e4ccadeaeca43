"""Rack-aware replica placement (issue 5, "What it must show" 3).

Six brokers in racks a, b, c: every partition of an RF=3 topic has one replica
per rack, and each broker leads within one of the ideal share of partitions.
"""

from __future__ import annotations

from collections import Counter

import pytest
from cluster_harness import ClusterFactory

RACKS = ("a", "b", "c")
PARTITION_COUNTS = (6, 8, 12, 30)


@pytest.mark.slow
def test_replicas_spread_over_racks_and_leaders_balance_across_six_brokers(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=6, racks=RACKS)
    state = cluster.state()
    rack_of = {broker.node_id: broker.rack for broker in state.brokers}
    assert sorted(rack_of.values()) == sorted(RACKS * 2), f"registered racks: {rack_of}"

    for count in PARTITION_COUNTS:
        topic = cluster.create_topic(count, 3, prefix="placement")
        partitions = [p for p in cluster.state().partitions if p.topic == topic]
        assert len(partitions) == count
        for p in partitions:
            racks = sorted(rack_of[replica] for replica in p.replicas)
            assert racks == sorted(RACKS), f"{topic}-{p.partition}: {p.replicas} in {racks}"
            assert p.leader == p.replicas[0], f"{topic}-{p.partition}: not led by its preferred"
        leaders = Counter(p.leader for p in partitions)
        ideal = count / len(rack_of)
        counts = {broker: leaders.get(broker, 0) for broker in rack_of}
        assert all(abs(n - ideal) <= 1 for n in counts.values()), (
            f"{count} partitions: leaders per broker {counts}, ideal {ideal:.2f}"
        )
