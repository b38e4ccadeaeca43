"""The workloads compare.py runs against each system, full size and --quick."""

from __future__ import annotations

from dataclasses import dataclass, replace

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class Workload:
    """One topic shape and client setting, run on a freshly started system.

    ``kind``: ``throughput`` produces ``size`` bytes as fast as possible and then
    consumes them; ``latency`` produces at half the records/s the system reached
    on the ``throughput`` workload ``paced_from`` in the same round, for
    ``seconds``; ``catch-up`` writes a ``size`` backlog and reads it all back;
    ``java`` is ``throughput`` with Kafka's own perf-test clients; ``transactions`` is
    ``throughput`` with a transactional producer that commits every ``transaction_ms``
    and a read_committed consumer.
    """

    name: str
    partitions: int = 6
    record_size: int = KIB
    compression: str = "lz4"
    acks: str = "1"
    batch_size: int = 64 * KIB
    linger_ms: int = 5
    nodes: int = 1
    kind: str = "throughput"
    size: int = 512 * MIB
    paced_from: str = ""
    seconds: float = 20.0
    transaction_ms: int = 100

    @property
    def records(self) -> int:
        return max(1, self.size // self.record_size)

    @property
    def replication(self) -> int:
        return min(3, self.nodes)

    def describe(self) -> str:
        return (
            f"{self.partitions}p {_size(self.record_size)} {self.compression} "
            f"batch {_size(self.batch_size)} acks={self.acks}"
            + (f" RF={self.replication}" if self.replication > 1 else "")
        )


HEADLINE = Workload("headline")

WORKLOADS = (
    HEADLINE,
    Workload("1-partition", partitions=1),
    Workload("100B-records", record_size=100, size=128 * MIB),
    Workload("uncompressed", compression="none"),
    Workload("1MiB-batches", batch_size=MIB),
    Workload("acks-all", acks="all"),
    Workload("latency-50%", kind="latency", paced_from=HEADLINE.name),
    Workload("java-clients", kind="java"),
    Workload("catch-up", kind="catch-up", batch_size=MIB, size=2048 * MIB),
    Workload("replicated", acks="all", nodes=3),
    Workload("latency-replicated", acks="all", nodes=3, kind="latency", paced_from="replicated"),
    Workload("transactions", kind="transactions", acks="all"),
)


def quick(workload: Workload, backlog: int) -> Workload:
    """A smaller run of ``workload`` for building and debugging the bench."""
    if workload.kind == "catch-up":
        return replace(workload, size=backlog)
    return replace(workload, size=workload.size // 8, seconds=5.0)


def _size(count: int) -> str:
    if count >= MIB:
        return f"{count // MIB} MiB"
    if count >= KIB:
        return f"{count // KIB} KiB"
    return f"{count} B"
