"""A started system under test, whichever it is, and what both systems share."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from secured_listener import PLAINTEXT, ListenerSecurity

from odradek.cli.child_process import ChildProcess, wait_until

READY_TIMEOUT_S = 120.0

# Settings both systems get, as Kafka names them: 1 GiB segments, 7 days of
# retention, and no fsync (both default to leaving flushing to the page cache).
SHARED_SETTINGS = {
    "log.segment.bytes": str(1024**3),
    "log.retention.ms": str(7 * 24 * 3600 * 1000),
    "log.flush.interval.messages": str(2**63 - 1),
}


@dataclass(frozen=True)
class RunningSystem:
    """A ready system: where clients connect and which processes are the brokers.

    ``pids`` are the processes whose CPU time and peak RSS count as the system's
    (brokers, and etcd for an Odradek cluster); ``ready_seconds`` runs from the
    first spawn until clients see every broker in Metadata; ``security`` is that
    of the clients' listener at ``bootstrap``; ``brokers`` are the broker processes,
    which a benchmark may kill and start again (their pids then change).
    """

    name: str
    bootstrap: str
    pids: tuple[int, ...]
    broker_pids: tuple[int, ...]
    ready_seconds: float
    data_dirs: tuple[Path, ...]
    security: ListenerSecurity = PLAINTEXT
    brokers: tuple[ChildProcess, ...] = ()

    @property
    def client(self) -> dict[str, str]:
        """librdkafka's settings to reach the clients' listener."""
        return self.security.client_settings(self.bootstrap)


def wait_for_brokers(
    client: Mapping[str, str], brokers: int, timeout: float = READY_TIMEOUT_S
) -> None:
    """Wait until a Metadata request through ``client``'s bootstrap lists ``brokers`` brokers."""
    admin = AdminClient({**client, "log_level": 0})

    def listed() -> bool:
        try:
            return len(admin.list_topics(timeout=1.0).brokers) >= brokers
        except Exception:  # KafkaException while the listener is not up yet
            time.sleep(0.05)
            return False

    wait_until(listed, timeout, f"{brokers} broker(s) in Metadata", interval=0.05)


def create_topic(
    client: Mapping[str, str],
    topic: str,
    partitions: int,
    replication: int,
    configs: Mapping[str, str],
) -> None:
    """Create ``topic`` and wait until every partition has a leader with a full ISR."""
    admin = AdminClient(dict(client))
    new_topic = NewTopic(
        topic, num_partitions=partitions, replication_factor=replication, config=dict(configs)
    )
    admin.create_topics([new_topic])[topic].result(timeout=60)
    wait_until(
        lambda: topic_settled(admin, topic, partitions, replication),
        READY_TIMEOUT_S,
        f"topic {topic} with leaders",
        interval=0.1,
    )


def topic_settled(admin: AdminClient, topic: str, partitions: int, replication: int) -> bool:
    """Whether Metadata shows ``topic``'s ``partitions`` partitions each led, with a full ISR."""
    try:
        described = admin.list_topics(topic, timeout=5.0).topics.get(topic)
    except Exception:  # KafkaException while the brokers are not up yet
        return False
    if described is None or described.error is not None:
        return False
    states = list(described.partitions.values())
    return len(states) == partitions and all(
        state.leader >= 0 and len(state.isrs) == replication for state in states
    )
