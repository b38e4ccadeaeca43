"""``odradek transactions list|describe|abort`` and the transaction metrics, on a real broker
with librdkafka's transactional producers (confluent-kafka): the CLI lists and describes an
open transaction, on one broker and on each coordinator of a 3-broker cluster; it aborts a
hanging one, left open by a producer killed mid-transaction, after which read_committed
consumers move past it (and so does Kafka's kafka-transactions abort); /metrics counts the
open transactions, the age of the oldest and the aborts by reason."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka import IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka_tools import kafka_tool
from kafka_wire import WireClient
from odradek_cli import odradek
from test_transactions import TIMEOUT_S, read_committed, topic_of, transactional

pytestmark = pytest.mark.slow

# A producer that writes to partitions 0 and 1 in a transaction of 10 minutes and is then
# killed: the transaction holds back the partitions' last stable offset until it is aborted.
HANGING_PRODUCER = """
import sys
from confluent_kafka import Producer
bootstrap, topic, transactional_id = sys.argv[1:]
producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                     "transaction.timeout.ms": 600000})
producer.init_transactions(30)
producer.begin_transaction()
producer.produce(topic, b"hanging-0", partition=0)
producer.produce(topic, b"hanging-1", partition=1)
producer.flush(30)
print("written", flush=True)
sys.stdin.read()
"""


def opened(broker: Broker, topic: str, transactional_id: str, **config: str) -> Producer:
    """A producer whose transaction is open, with one record written to partition 0."""
    producer = transactional(broker, transactional_id, **config)
    producer.begin_transaction()
    producer.produce(topic, transactional_id.encode(), partition=0)
    producer.flush(TIMEOUT_S)
    return producer


def table(output: str) -> list[dict[str, str]]:
    """The rows of a table the CLI printed, by column name (an empty last cell: absent)."""
    header, *rows = output.splitlines()
    return [dict(zip(header.split(), row.split(), strict=False)) for row in rows]


def cli(broker: Broker, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    return odradek("transactions", *args, "--bootstrap-server", broker.bootstrap, expect=expect)


def test_list_and_describe_show_an_open_transaction(broker: Broker) -> None:
    topic = topic_of(broker)
    transactional_id = unique_name("open")
    producer = opened(broker, topic, transactional_id)

    listed = cli(broker, "list")
    assert "Listing transactions on every broker" in listed.stderr
    [row] = [r for r in table(listed.stdout) if r["TransactionalId"] == transactional_id]
    assert (row["Coordinator"], row["TransactionState"]) == ("0", "Ongoing"), listed.stdout
    producer_id = row["ProducerId"]

    described = cli(broker, "describe", "--transactional-id", transactional_id)
    [row] = table(described.stdout)
    assert row["CoordinatorId"] == "0"
    assert row["ProducerId"] == producer_id
    assert row["ProducerEpoch"] == "0"
    assert row["TransactionState"] == "Ongoing"
    assert row["TransactionTimeoutMs"] == "60000"  # librdkafka's default
    started_ms = int(row["CurrentTransactionStartTimeMs"])
    assert abs(started_ms - time.time() * 1000) < 30_000
    assert 0 <= int(row["TransactionDurationMs"]) < 30_000
    assert row["TopicPartitions"] == f"{topic}-0"

    producer.commit_transaction(TIMEOUT_S)
    [row] = table(cli(broker, "describe", "--transactional-id", transactional_id).stdout)
    assert row["TransactionState"] == "CompleteCommit"
    assert "TopicPartitions" not in row  # none: the transaction is over


def test_describe_of_an_unknown_transactional_id_says_so(broker: Broker) -> None:
    unknown = cli(broker, "describe", "--transactional-id", unique_name("nobody"), expect=1)
    assert "TRANSACTIONAL_ID_NOT_FOUND (the transactionalId could not be found)" in unknown.stderr
    assert unknown.stdout == ""


def last_stable_offset(broker: Broker, topic: str, partition: int) -> int:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    wanted = {TopicPartition(topic, partition): OffsetSpec.latest()}  # type: ignore[no-untyped-call]
    [future] = admin.list_offsets(
        wanted, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=TIMEOUT_S
    ).values()
    return int(future.result().offset)


def leave_hanging(broker: Broker, topic: str, transactional_id: str) -> None:
    """A transaction on partitions 0 and 1 whose producer is killed, then a committed one
    after it: read_committed consumers wait for the first to end."""
    hanging = subprocess.Popen(
        [sys.executable, "-c", HANGING_PRODUCER, broker.bootstrap, topic, transactional_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert hanging.stdout is not None
        assert hanging.stdout.readline() == "written\n"
    finally:
        hanging.kill()
        hanging.wait()
    later = transactional(broker, unique_name("later"))
    later.begin_transaction()
    for partition in (0, 1):
        later.produce(topic, f"later-{partition}".encode(), partition=partition)
    later.commit_transaction(TIMEOUT_S)
    assert [last_stable_offset(broker, topic, p) for p in (0, 1)] == [0, 0]


def test_abort_ends_a_hanging_transaction_and_read_committed_consumers_move_past_it(
    broker: Broker,
) -> None:
    topic = topic_of(broker)
    transactional_id = unique_name("hanging")
    leave_hanging(broker, topic, transactional_id)

    producers = cli(broker, "describe-producers", "--topic", topic, "--partition", "0").stdout
    [open_one] = [p for p in table(producers) if p["CurrentTransactionStartOffset"] != "None"]
    assert open_one["CurrentTransactionStartOffset"] == "0", producers
    assert len(table(producers)) == 2, producers  # and the later producer's, with none open

    nothing = cli(broker, "abort", "--topic", topic, "--partition", "0", "--start-offset", "1",
                  expect=1)  # fmt: skip
    assert f"no open transaction starts at offset 1 of {topic}-0" in nothing.stderr

    by_offset = cli(broker, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
    assert re.search(
        rf"Aborted the transaction of producer \d+ \(epoch 0, coordinator epoch 0\) on {topic}-0",
        by_offset.stderr,
    ), by_offset.stderr
    assert last_stable_offset(broker, topic, 0) > 0
    assert last_stable_offset(broker, topic, 1) == 0

    [row] = table(cli(broker, "describe", "--transactional-id", transactional_id).stdout)
    by_producer = cli(broker, "abort", "--topic", topic, "--partition", "1",
                      "--producer-id", row["ProducerId"], "--producer-epoch", "0",
                      "--coordinator-epoch", "-1")  # fmt: skip
    assert f"Aborted the transaction of producer {row['ProducerId']}" in by_producer.stderr
    assert read_committed(broker.bootstrap, topic) == ["later-0", "later-1"]


def test_kafka_transactions_aborts_a_hanging_transaction_too(broker: Broker) -> None:
    """Kafka's own tool: DescribeProducers, then WriteTxnMarkers from the Java admin client."""
    topic = topic_of(broker)
    leave_hanging(broker, topic, unique_name("hanging"))
    tool = ("kafka-transactions", "--bootstrap-server", broker.bootstrap)
    for partition in ("0", "1"):
        kafka_tool(*tool, "abort", "--topic", topic, "--partition", partition,
                   "--start-offset", "0")  # fmt: skip
    assert read_committed(broker.bootstrap, topic) == ["later-0", "later-1"]


def test_list_asks_every_broker_and_describe_finds_each_coordinator(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(1, 3, prefix="txn")
    config = {**cluster.client_config, "bootstrap.servers": cluster.bootstrap}
    transactional_ids = [unique_name(f"app{i}") for i in range(9)]
    producers = []
    for transactional_id in transactional_ids:
        producer = Producer({**config, "transactional.id": transactional_id})
        producer.init_transactions(TIMEOUT_S)
        producer.begin_transaction()
        producer.produce(topic, b"open", partition=0)
        producer.flush(TIMEOUT_S)
        producers.append(producer)
    every = ("--bootstrap-server", cluster.bootstrap)
    listed = {row["TransactionalId"]: row for row in
              table(odradek("transactions", "list", *every).stdout)}  # fmt: skip
    assert set(transactional_ids) <= listed.keys()
    assert {listed[t]["TransactionState"] for t in transactional_ids} == {"Ongoing"}
    coordinators = {listed[t]["Coordinator"] for t in transactional_ids}
    assert len(coordinators) > 1, "__transaction_state's leaders should be spread"
    for transactional_id in transactional_ids:
        described = odradek("transactions", "describe", "--transactional-id", transactional_id,
                            *every).stdout  # fmt: skip
        [row] = table(described)
        assert row["CoordinatorId"] == listed[transactional_id]["Coordinator"]
    for producer in producers:
        producer.abort_transaction(TIMEOUT_S)


def test_an_unreachable_cluster_is_said_so_within_the_timeout() -> None:
    started = time.monotonic()
    failed = odradek("transactions", "list", "--bootstrap-server", "127.0.0.1:1", "--timeout",
                     "1", expect=1)  # fmt: skip
    assert "could not reach the cluster at 127.0.0.1:1 within 1 s" in failed.stderr
    assert time.monotonic() - started < 20


def orphan_batch(producer_id: int, timestamp_ms: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
        producer_epoch=0, base_sequence=0, batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=timestamp_ms, key=None, value=b"orphan", headers=[])
    return bytes(builder.build())


def test_find_hanging_shows_a_transaction_no_coordinator_knows_and_abort_ends_it(
    broker: Broker,
) -> None:
    """A transactional batch of a producer id no coordinator gave out (Produce takes it
    unverified, as Kafka did before KIP-890, which is how its hanging transactions came
    about) hangs; an open transaction its coordinator holds does not. Kafka's own
    find-hanging agrees."""
    topic = topic_of(broker)
    orphan = 1 << 40
    with WireClient.to(broker.bootstrap) as wire:
        written = wire.produce(topic, 0, orphan_batch(orphan, int(time.time() * 1000) - 60_000))
    assert int(written.error_code) == 0, written
    held = opened(broker, topic, unique_name("held"))
    search = ("find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
    found = table(cli(broker, *search).stdout)
    assert [(r["Topic"], r["Partition"], r["ProducerId"], r["StartOffset"]) for r in found] == [
        (topic, "0", str(orphan), "0")
    ]
    assert found[0]["Duration(min)"] == "1"
    assert table(cli(broker, "find-hanging", "--topic", topic).stdout) == []  # 15 minutes
    on_broker = table(cli(broker, "find-hanging", "--broker-id", "0",
                          "--max-transaction-timeout", "0").stdout)  # fmt: skip
    assert (topic, str(orphan)) in [(r["Topic"], r["ProducerId"]) for r in on_broker]
    java = kafka_tool("kafka-transactions", "--bootstrap-server", broker.bootstrap, *search)
    assert [row.split()[:3] for row in java.splitlines()[1:]] == [[topic, "0", str(orphan)]], java
    cli(broker, "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
    assert table(cli(broker, *search).stdout) == []
    held.abort_transaction(TIMEOUT_S)
    refused = cli(broker, "find-hanging", "--partition", "0", expect=1)
    assert "find-hanging needs --topic or --broker-id" in refused.stderr


def test_abort_needs_a_start_offset_or_the_whole_producer(broker: Broker) -> None:
    incomplete = cli(broker, "abort", "--topic", "t", "--partition", "0", "--producer-id", "7",
                     expect=1)  # fmt: skip
    assert "--producer-epoch is missing" in incomplete.stderr


def sample(broker: Broker, name: str, labels: str = "") -> float:
    """One sample of the broker's /metrics, e.g. ``sample(b, "x_total", 'reason="timeout"')``."""
    wanted = f"{name}{{{labels}}} " if labels else f"{name} "
    lines = broker.metrics_text().splitlines()
    return float(next(line.split()[-1] for line in lines if line.startswith(wanted)))


def eventually(check: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.2)


def test_metrics_count_open_transactions_their_age_and_aborts_by_reason(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(
        settings={"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
    )
    topic = topic_of(broker)
    aborts = "odradek_transaction_aborts_total"
    assert sample(broker, "odradek_open_transactions") == 0
    assert sample(broker, "odradek_open_transaction_oldest_age_seconds") == 0

    aborting = opened(broker, topic, unique_name("aborting"))
    assert sample(broker, "odradek_open_transactions") == 1
    time.sleep(1)
    assert sample(broker, "odradek_open_transaction_oldest_age_seconds") >= 1
    aborting.abort_transaction(TIMEOUT_S)
    assert sample(broker, aborts, 'reason="client"') == 1

    transactional_id = unique_name("zombie")
    opened(broker, topic, transactional_id)
    transactional(broker, transactional_id)  # fences the zombie and aborts its transaction
    assert sample(broker, aborts, 'reason="fenced"') == 1

    opened(broker, topic, unique_name("slow"), **{"transaction.timeout.ms": "1000"})
    eventually(lambda: sample(broker, aborts, 'reason="timeout"') == 1, "a timeout abort")
    eventually(lambda: sample(broker, "odradek_open_transactions") == 0, "no open transaction")
    assert sample(broker, aborts, 'reason="client"') == 1
    assert sample(broker, aborts, 'reason="fenced"') == 1
    assert sample(broker, "odradek_open_transaction_oldest_age_seconds") == 0
    assert sample(broker, "odradek_transaction_commits_total") == 0
    opened(broker, topic, unique_name("committing")).commit_transaction(TIMEOUT_S)
    assert sample(broker, "odradek_transaction_commits_total") == 1
    assert sample(broker, "odradek_open_transactions") == 0
