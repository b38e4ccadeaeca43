"""Where the replicas of new partitions go: rack-aware round robin, like Kafka's.

Brokers are interleaved across racks (a, b, c, a, b, c, ...), so consecutive
replicas of a partition land on distinct racks first and distinct brokers
always; the first replica (the preferred leader) rotates so leaders spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest

from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.protocol.errors import ErrorCode, KafkaError


def rack_alternating_order(brokers: Sequence[BrokerRegistration]) -> list[int]:
    """Broker ids ordered so that neighbours sit on different racks where possible."""
    by_rack: dict[str | None, list[int]] = {}
    for broker in sorted(brokers, key=lambda item: item.node_id):
        by_rack.setdefault(broker.rack, []).append(broker.node_id)
    columns = [by_rack[rack] for rack in sorted(by_rack, key=lambda rack: rack or "")]
    return [node for row in zip_longest(*columns) for node in row if node is not None]


def assign_replicas(
    brokers: Sequence[BrokerRegistration],
    partitions: int,
    replication_factor: int,
    first_partition: int = 0,
) -> list[tuple[int, ...]]:
    """Replica lists for partitions ``first_partition .. first_partition + partitions - 1``."""
    if partitions <= 0:
        raise KafkaError(ErrorCode.invalid_partitions, "the number of partitions must be positive")
    if replication_factor <= 0:
        raise KafkaError(
            ErrorCode.invalid_replication_factor, "the replication factor must be positive"
        )
    if replication_factor > len(brokers):
        raise KafkaError(
            ErrorCode.invalid_replication_factor,
            f"replication factor {replication_factor} is larger than the "
            f"{len(brokers)} available brokers",
        )
    order = rack_alternating_order(brokers)
    rack_of = {broker.node_id: broker.rack for broker in brokers}
    count, rack_count = len(order), len(set(rack_of.values()))
    assignments = []
    for index in range(first_partition, first_partition + partitions):
        first = index % count
        # Kafka's follower shift grows every full round, so follower sets differ too.
        shift = (index // count) * rack_count
        replicas = [order[first]]
        racks = {rack_of[order[first]]}
        step = 0
        while len(replicas) < replication_factor:
            candidate = order[(first + 1 + (shift + step) % max(count - 1, 1)) % count]
            step += 1
            rack_ok = rack_of[candidate] not in racks or len(racks) == rack_count
            if rack_ok and candidate not in replicas:
                replicas.append(candidate)
                racks.add(rack_of[candidate])
        assignments.append(tuple(replicas))
    return assignments
