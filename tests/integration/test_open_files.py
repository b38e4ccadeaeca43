"""Open files: a broker lifts its soft open-file limit to the hard one, as the JVM does for
Kafka, and holds one descriptor per segment (issue 22, partition scale)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

from broker_process import Broker, BrokerFactory, unique_name
from kafka_wire import WireClient

PARTITIONS = 400
LOGS_MADE_S = 30


def open_descriptors(broker: Broker) -> int:
    return len(os.listdir(f"/proc/{broker.pid}/fd"))


def test_broker_lifts_its_soft_open_file_limit_to_the_hard_one(
    broker_factory: BrokerFactory,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # systemd's soft default
    try:
        broker = broker_factory()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    most = hard
    if hard == resource.RLIM_INFINITY:
        most = int(Path("/proc/sys/fs/nr_open").read_text())
    assert resource.prlimit(broker.pid, resource.RLIMIT_NOFILE) == (most, hard)
    assert f"open file limit: {most}" in broker.log_path.read_text()


def test_a_partition_costs_its_broker_one_descriptor(broker_factory: BrokerFactory) -> None:
    broker = broker_factory(settings={"num.partitions": str(PARTITIONS)})
    with WireClient.to(broker.bootstrap) as wire:
        wire.metadata(None)
        before = open_descriptors(broker)
        wire.wait_for_topic(unique_name("many"))
    # the logs past the first 64 are made off the event loop, after Metadata names leaders
    deadline = time.monotonic() + LOGS_MADE_S
    while (added := open_descriptors(broker) - before) < PARTITIONS:
        assert time.monotonic() < deadline, f"{added} descriptors after {LOGS_MADE_S} s"
        time.sleep(0.1)
    time.sleep(0.5)  # and no more come
    # one segment each, and a few files of the broker's own (checkpoints come and go)
    assert open_descriptors(broker) - before <= PARTITIONS + 20
