"""compare.py's Go load generator (bench/loadgen, `--clients go`) on a real broker: it sends
the very records the Python producer sends, and reads back what it says it read."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from broker_process import Broker, unique_name
from kafka_clients import BEGINNING, ConfluentClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from go_clients import go_consume, go_produce, write_pool
from load_workers import ConsumerJob, ProducerJob
from running_system import RunningSystem, create_topic

from odradek.cli.produce_command import synthetic_records

PARTITIONS = 3
RECORDS = 3000
SIZE = 100


def test_the_go_producer_sends_the_python_producers_records_and_the_consumer_reads_them(
    broker: Broker, tmp_path: Path
) -> None:
    assert broker.process is not None
    pids = (broker.process.pid,)
    running = RunningSystem("odradek", broker.bootstrap, pids, pids, 0.0, (broker.data_dir,))
    topic = unique_name("loadgen")
    create_topic(running.client, topic, PARTITIONS, 1, {})
    job = ProducerJob(topic, RECORDS, SIZE, "lz4", "all", 5, 16 * 1024)

    produced = go_produce(running, job, write_pool(tmp_path / "pool.txt", job))

    assert (produced.moved.records, produced.moved.size) == (RECORDS, RECORDS * SIZE)
    assert produced.moved.seconds > 0 and produced.moved.client_cpu_seconds > 0
    assert produced.cpu_seconds > 0  # the broker's, while the records went in
    client = ConfluentClient()
    stored: Counter[bytes] = Counter()
    for partition in range(PARTITIONS):
        _, end = client.offsets(broker.bootstrap, topic, partition)
        records = client.consume(broker.bootstrap, topic, partition, BEGINNING, end)
        stored.update(record.value for record in records)
    assert stored == Counter(value for _, value in synthetic_records(RECORDS, SIZE))

    consumed = go_consume(running, ConsumerJob(topic, RECORDS))

    assert (consumed.moved.records, consumed.moved.size) == (RECORDS, RECORDS * SIZE)
