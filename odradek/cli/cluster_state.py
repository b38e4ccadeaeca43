"""What ``odradek cluster`` shows: brokers, the controller and unhealthy partitions.

Read through a Kafka admin client: DescribeCluster for brokers (with racks) and
the controller, Metadata for every partition's leader, replicas and ISR.
"""

from __future__ import annotations

from dataclasses import dataclass

from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

from odradek.cli.text_table import format_table

NO_LEADER = -1


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def offline(self) -> bool:
        return self.leader == NO_LEADER

    @property
    def under_replicated(self) -> bool:
        return not self.offline and len(self.isr) < len(self.replicas)


@dataclass(frozen=True)
class ClusterState:
    cluster_id: str
    controller_id: int
    brokers: tuple[BrokerInfo, ...]
    partitions: tuple[PartitionInfo, ...]

    @property
    def offline(self) -> list[PartitionInfo]:
        return [p for p in self.partitions if p.offline]

    @property
    def under_replicated(self) -> list[PartitionInfo]:
        return [p for p in self.partitions if p.under_replicated]

    def leader_counts(self) -> dict[int, int]:
        counts = {broker.node_id: 0 for broker in self.brokers}
        for partition in self.partitions:
            if not partition.offline:
                counts[partition.leader] = counts.get(partition.leader, 0) + 1
        return counts


def read_cluster_state(admin: AdminClient, timeout: float) -> ClusterState:
    """One DescribeCluster and one Metadata request; raises KafkaException on failure."""
    cluster = admin.describe_cluster(request_timeout=timeout).result()
    metadata = admin.list_topics(timeout=timeout)
    nodes = sorted(cluster.nodes, key=lambda node: node.id)
    brokers = tuple(BrokerInfo(n.id, n.host, n.port, n.rack or None) for n in nodes)
    partitions = tuple(
        PartitionInfo(name, p.id, p.leader, tuple(p.replicas), tuple(p.isrs))
        for name, topic in sorted(metadata.topics.items())
        for p in sorted(topic.partitions.values(), key=lambda p: p.id)
    )
    controller = cluster.controller.id if cluster.controller is not None else NO_LEADER
    return ClusterState(str(cluster.cluster_id), controller, brokers, partitions)


def format_brokers(state: ClusterState) -> list[str]:
    """One row per broker: id, address, rack, partitions led, and which is the controller."""
    leaders = state.leader_counts()
    rows = [
        (
            broker.node_id,
            broker.address,
            broker.rack or "-",
            leaders.get(broker.node_id, 0),
            "yes" if broker.node_id == state.controller_id else "",
        )
        for broker in state.brokers
    ]
    return format_table(("ID", "ADDRESS", "RACK", "LEADERS", "CONTROLLER"), rows)


def format_partitions(partitions: list[PartitionInfo]) -> list[str]:
    rows = [
        (p.topic, p.partition, p.leader if not p.offline else "none", _ids(p.replicas), _ids(p.isr))
        for p in partitions
    ]
    return format_table(("TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR"), rows)


def format_state(state: ClusterState) -> list[str]:
    """The whole report: brokers, controller, then offline and under-replicated partitions."""
    controller = str(state.controller_id) if state.controller_id != NO_LEADER else "none"
    lines = [
        f"Cluster {state.cluster_id}: {len(state.brokers)} broker(s), controller {controller}, "
        f"{len(state.partitions)} partition(s)",
        "",
        *format_brokers(state),
    ]
    for title, unhealthy in (
        ("Offline partitions", state.offline),
        ("Under-replicated partitions", state.under_replicated),
    ):
        lines += ["", f"{title}: {len(unhealthy) or 'none'}"]
        if unhealthy:
            lines += format_partitions(unhealthy)
    return lines


def _ids(broker_ids: tuple[int, ...]) -> str:
    return ",".join(str(broker_id) for broker_id in broker_ids) or "-"
