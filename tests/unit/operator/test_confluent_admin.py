"""The operator's Kafka admin edge against a real `odradek broker` on loopback."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from odradek.operator.handlers.confluent_admin import ConfluentAdmin
from odradek.operator.handlers.kafka_admin import KafkaAdminError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "integration"))
from broker_process import Broker


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConfluentAdmin]:
    broker = Broker(tmp_path_factory.mktemp("operator-admin"), settings={"node.id": "0"})
    broker.start()
    try:
        yield ConfluentAdmin(broker.bootstrap)
    finally:
        broker.close()


def test_an_unreachable_cluster_is_reported_as_unavailable_within_the_timeout() -> None:
    admin = ConfluentAdmin(f"127.0.0.1:{closed_port()}", timeout=1.0)
    start = time.monotonic()
    with pytest.raises(KafkaAdminError):
        admin.describe()
    with pytest.raises(KafkaAdminError):
        admin.topic("orders")
    assert time.monotonic() - start < 10


@pytest.mark.slow
def test_topic_lifecycle_through_the_admin_api(admin: ConfluentAdmin) -> None:
    assert admin.topic("op-orders") is None
    admin.create_topic("op-orders", 2, 1, {"retention.ms": "60000", "min.insync.replicas": "1"})
    observed = admin.topic("op-orders")
    assert observed is not None
    assert (observed.partitions, observed.replicas) == (2, 1)
    assert observed.overrides == {"retention.ms": "60000", "min.insync.replicas": "1"}
    assert observed.topic_id

    admin.create_partitions("op-orders", 4)
    admin.alter_configs("op-orders", {"cleanup.policy": "compact"}, ("retention.ms",))
    observed = admin.topic("op-orders")
    assert observed is not None and observed.partitions == 4
    assert observed.overrides == {"cleanup.policy": "compact", "min.insync.replicas": "1"}

    metadata = admin.describe()
    assert metadata.brokers == frozenset({0}) and metadata.controller == 0
    mine = [p for p in metadata.partitions if p.topic == "op-orders"]
    assert [(p.index, p.replicas, p.isr, p.min_isr) for p in mine] == [
        (i, (0,), (0,), 1) for i in range(4)
    ]

    admin.delete_topic("op-orders")
    assert admin.topic("op-orders") is None


@pytest.mark.slow
def test_a_reassignment_the_broker_cannot_do_is_an_admin_error(admin: ConfluentAdmin) -> None:
    """Today's broker lacks AlterPartitionReassignments; once it has it, this moves nothing."""
    admin.create_topic("op-moves", 1, 1, {})
    try:
        admin.reassign({("op-moves", 0): (0,)})
    except KafkaAdminError as error:
        assert "reassignment" in str(error)
