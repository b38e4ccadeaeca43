"""Replica placement: distinct brokers, racks spread, leaders balanced."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.replica_placement import assign_replicas
from odradek.broker.protocol.errors import ErrorCode, KafkaError


@st.composite
def clusters(draw: st.DrawFn) -> list[BrokerRegistration]:
    count = draw(st.integers(1, 9))
    racks = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=count, max_size=count))
    return [BrokerRegistration(i, "h", 9092, rack) for i, rack in enumerate(racks)]


@given(brokers=clusters(), partitions=st.integers(1, 60), data=st.data())
def test_replicas_are_distinct_and_leaders_balanced(
    brokers: list[BrokerRegistration], partitions: int, data: st.DataObject
) -> None:
    factor = data.draw(st.integers(1, len(brokers)))
    assignment = assign_replicas(brokers, partitions, factor)
    assert len(assignment) == partitions
    for replicas in assignment:
        assert len(replicas) == factor
        assert len(set(replicas)) == factor
    leaders = Counter(replicas[0] for replicas in assignment)
    assert max(leaders.values()) - min(leaders.get(b.node_id, 0) for b in brokers) <= 1


@given(brokers=clusters(), partitions=st.integers(1, 30))
def test_replicas_use_as_many_racks_as_the_cluster_has(
    brokers: list[BrokerRegistration], partitions: int
) -> None:
    racks = {broker.node_id: broker.rack for broker in brokers}
    rack_count = len(set(racks.values()))
    per_rack = Counter(racks.values())
    factor = min(rack_count, len(brokers))
    # Rack spread is guaranteed when racks hold equal numbers of brokers, as in Kafka.
    if len(set(per_rack.values())) != 1:
        return
    for replicas in assign_replicas(brokers, partitions, factor):
        assert len({racks[node] for node in replicas}) == factor


def test_more_replicas_than_brokers_is_invalid_replication_factor() -> None:
    brokers = [BrokerRegistration(0, "h", 9092)]
    with pytest.raises(KafkaError) as raised:
        assign_replicas(brokers, 1, 2)
    assert raised.value.code is ErrorCode.invalid_replication_factor


def test_zero_partitions_is_invalid_partitions() -> None:
    with pytest.raises(KafkaError) as raised:
        assign_replicas([BrokerRegistration(0, "h", 9092)], 0, 1)
    assert raised.value.code is ErrorCode.invalid_partitions
