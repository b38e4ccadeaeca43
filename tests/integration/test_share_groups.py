"""Share groups (KIP-932) with real share consumers: librdkafka's ShareConsumer
(confluent-kafka) and the Java KafkaShareConsumer (Kafka's VerifiableShareConsumer).

Records of one partition are shared among consumers, each handed to one consumer at a
time; a killed consumer's records come back once their lock expires; rejected records and
records released ``group.share.delivery.count.limit`` times are not delivered again; and
the share-partitions' state survives a broker restart and a leader failover. Kafka's
``kafka-share-groups`` describes, resets and deletes share groups."""

from __future__ import annotations

import glob
import time
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest
from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from group_members import wait_until
from kafka_tools import kafka_tool, run_kafka_tool
from share_consumer import JAVA, LIBRDKAFKA
from share_members import (
    DELIVERY_LIMIT,
    LOCK_S,
    SHARE_SETTINGS,
    ShareMember,
    ShareMemberFactory,
    delivered,
    produce_one_by_one,
    set_group_configs,
    start_at_earliest,
    started_share_members,
)

from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group
from odradek.broker.share.share_coordinator import partition_for_share_key
from odradek.broker.share.share_state import SHARE_STATE_TOPIC

pytestmark = pytest.mark.slow
WAIT_S = 60.0


@pytest.fixture
def share_spawn(tmp_path: Path) -> Iterator[ShareMemberFactory]:
    yield from started_share_members(tmp_path)


@pytest.fixture(scope="module")
def share_broker(module_broker_factory: BrokerFactory) -> Broker:
    return module_broker_factory(SHARE_SETTINGS)


def new_topic(bootstrap: str, partitions: int = 1) -> str:
    name = unique_name("shared")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
    return name


@pytest.mark.parametrize("client", [LIBRDKAFKA, JAVA])
def test_four_consumers_share_the_records_of_one_partition(
    share_broker: Broker, share_spawn: ShareMemberFactory, client: str
) -> None:
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    start_at_earliest(bootstrap, group)
    members = [share_spawn(client, bootstrap, topic, group) for _ in range(4)]
    wait_until(
        lambda: (
            share_broker.metric("odradek_share_group_members", group=group) == 4
            and share_broker.metric("odradek_share_sessions") >= 4
        ),
        "the four members fetch",
        WAIT_S,
    )
    sent = produce_one_by_one(bootstrap, topic, (f"r-{i}" for i in range(200)), pace_s=0.005)
    wait_until(lambda: set(delivered(members)) == set(sent), "every record was delivered", WAIT_S)
    counts = delivered(members)
    assert max(counts.values()) == 1, [v for v, n in counts.items() if n > 1]
    busy = [member for member in members if member.values()]
    assert len(busy) >= 3, [len(member.values()) for member in members]
    offsets = sorted(offset for member in members for _, offset, _, _ in member.deliveries())
    assert offsets == list(range(200))  # each offset went to exactly one consumer


def held_records(
    broker: Broker, spawn: ShareMemberFactory, topic: str, group: str
) -> tuple[ShareMember, set[str], list[str]]:
    """A consumer that acquired records and acknowledges none; what it holds; all sent."""
    start_at_earliest(broker.bootstrap, group)
    sent = produce_one_by_one(broker.bootstrap, topic, (f"held-{i}" for i in range(5)))
    holder = spawn(LIBRDKAFKA, broker.bootstrap, topic, group, "--hold")
    wait_until(lambda: bool(holder.deliveries()), "the holder acquired records", WAIT_S)
    return holder, {value for _, _, value, _ in holder.deliveries()}, sent


def test_a_killed_consumers_records_go_to_another_consumer(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    """Its connection closes with it, which ends its share session: its records are
    released at once, counting one delivery."""
    topic, group = new_topic(share_broker.bootstrap), unique_name("share")
    holder, held, sent = held_records(share_broker, share_spawn, topic, group)
    holder.kill()
    other = share_spawn(LIBRDKAFKA, share_broker.bootstrap, topic, group)
    wait_until(lambda: set(other.values()) == set(sent), "every record was delivered", WAIT_S)
    redelivered = {value: count for _, _, value, count in other.deliveries()}
    assert all(redelivered[value] == 2 for value in held), redelivered


def test_a_hung_consumers_records_come_back_after_their_lock_expires(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    """A consumer stopped dead (SIGSTOP) keeps its connection: only the acquisition lock
    (``group.share.record.lock.duration.ms``) frees its records."""
    topic, group = new_topic(share_broker.bootstrap), unique_name("share")
    holder, held, sent = held_records(share_broker, share_spawn, topic, group)
    acquired_at = time.monotonic()
    holder.pause()
    other = share_spawn(LIBRDKAFKA, share_broker.bootstrap, topic, group)
    wait_until(lambda: held <= set(other.values()), "the held records came back", WAIT_S)
    assert time.monotonic() - acquired_at >= LOCK_S * 0.9
    redelivered = {value: count for _, _, value, count in other.deliveries()}
    assert all(redelivered[value] == 2 for value in held), redelivered
    wait_until(lambda: set(other.values()) == set(sent), "the rest was delivered too")


def test_java_consumers_lose_nothing_when_one_of_them_is_killed(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    """The Java KafkaShareConsumer: what a killed member held goes to the others."""
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    start_at_earliest(bootstrap, group)
    victim, survivor = (share_spawn(JAVA, bootstrap, topic, group) for _ in range(2))
    wait_until(
        lambda: share_broker.metric("odradek_share_group_members", group=group) == 2,
        "both members joined",
        WAIT_S,
    )
    first = produce_one_by_one(bootstrap, topic, (f"k-{i}" for i in range(100)), pace_s=0.005)
    wait_until(lambda: len(victim.values()) >= 10, "the victim got records", WAIT_S)
    victim.kill()
    rest = produce_one_by_one(bootstrap, topic, (f"k-{i}" for i in range(100, 200)))
    sent = set(first + rest)
    wait_until(
        lambda: sent <= set(delivered([victim, survivor])), "every record was delivered", WAIT_S
    )
    twice = {value for value, count in delivered([victim, survivor]).items() if count > 1}
    assert twice <= set(victim.values())  # only what the killed member held came again


def test_rejected_records_and_those_released_too_often_are_not_delivered_again(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    start_at_earliest(bootstrap, group)
    options = ("--reject", "poison", "--release", "flaky")
    members = [share_spawn(LIBRDKAFKA, bootstrap, topic, group, *options) for _ in range(2)]
    values = [f"ok-{i}" for i in range(10)] + ["poison-0", "poison-1", "flaky-0", "flaky-1"]
    produce_one_by_one(bootstrap, topic, values)
    wait_until(
        lambda: delivered(members)["flaky-1"] == DELIVERY_LIMIT,
        f"flaky records were delivered {DELIVERY_LIMIT} times",
        WAIT_S,
    )
    time.sleep(LOCK_S + 1)  # long enough for anything still to come back
    counts = delivered(members)
    assert {value: counts[value] for value in values} == {
        **{f"ok-{i}": 1 for i in range(10)},
        "poison-0": 1,
        "poison-1": 1,
        "flaky-0": DELIVERY_LIMIT,
        "flaky-1": DELIVERY_LIMIT,
    }
    flaky = sorted(c for m in members for _, _, v, c in m.deliveries() if v == "flaky-0")
    assert flaky == [1, 2, 3]


def test_a_read_committed_share_group_never_gets_aborted_records(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    set_group_configs(
        bootstrap,
        group,
        {"share.auto.offset.reset": "earliest", "share.isolation.level": "read_committed"},
    )
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": unique_name("txn")}
    )
    producer.init_transactions(15)
    for outcome in ("committed", "aborted", "committed-again"):
        producer.begin_transaction()
        for index in range(5):
            producer.produce(topic, value=f"{outcome}-{index}".encode())
        if outcome == "aborted":
            producer.abort_transaction(15)
        else:
            producer.commit_transaction(15)
    member = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wanted = {f"{outcome}-{i}" for outcome in ("committed", "committed-again") for i in range(5)}
    wait_until(lambda: wanted <= set(member.values()), "the committed records came", WAIT_S)
    time.sleep(1)
    assert sorted(member.values()) == sorted(wanted)


def test_acknowledged_records_stay_done_across_a_broker_crash(
    broker_factory: BrokerFactory, share_spawn: ShareMemberFactory
) -> None:
    broker = broker_factory(SHARE_SETTINGS)
    bootstrap = broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    start_at_earliest(bootstrap, group)
    first_half = produce_one_by_one(bootstrap, topic, (f"a-{i}" for i in range(20)))
    first = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: set(first.values()) == set(first_half), "the first half was consumed")
    first.close()  # its acknowledgements are written before it leaves
    broker.kill()
    broker.start()
    second_half = produce_one_by_one(bootstrap, topic, (f"b-{i}" for i in range(20)))
    second = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: set(second.values()) == set(second_half), "the second half was consumed")
    time.sleep(1)
    assert sorted(second.values()) == sorted(second_half)  # nothing acknowledged came back


def test_share_state_survives_the_partition_leader_failing(
    cluster_factory: ClusterFactory, share_spawn: ShareMemberFactory
) -> None:
    cluster = cluster_factory(3, settings={**SHARE_SETTINGS})
    bootstrap = cluster.bootstrap
    topic, group = cluster.create_topic(1, prefix="shared"), unique_name("share")
    start_at_earliest(bootstrap, group)
    before = produce_one_by_one(bootstrap, topic, (f"before-{i}" for i in range(30)))
    consumer = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: set(consumer.values()) == set(before), "the records were consumed")
    time.sleep(1)  # the acknowledgements of the last poll go out with the next one
    cluster.kill(cluster.leader_of(topic, 0))
    after = produce_one_by_one(bootstrap, topic, (f"after-{i}" for i in range(30)))
    wait_until(
        lambda: set(after) <= set(consumer.values()),
        "the records written after the failover were consumed",
        WAIT_S,
    )
    counts = delivered([consumer])
    assert all(counts[value] == 1 for value in before), counts


def test_kafka_share_groups_describes_resets_and_deletes_a_share_group(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap, partitions=2), unique_name("share")
    start_at_earliest(bootstrap, group)
    sent = produce_one_by_one(bootstrap, topic, (f"t-{i}" for i in range(10)))
    member = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: sorted(member.values()) == sorted(sent), "the records were consumed")

    def tool(*arguments: str) -> str:
        return kafka_tool("kafka-share-groups", "--bootstrap-server", bootstrap, *arguments)

    assert group in tool("--list").split()
    members = rows(tool("--describe", "--group", group, "--members"))
    assert [(row[0], row[3], row[4], row[5]) for row in members] == [
        (group, "librdkafka-0", "2", f"{topic}:0,1")
    ]
    assert [
        (row[0], row[-2], row[-1]) for row in rows(tool("--describe", "--group", group, "--state"))
    ] == [(group, "Stable", "1")]
    wait_until(  # the last acknowledgements reach the share coordinator
        lambda: sum(int(row[3]) for row in rows(tool("--describe", "--group", group))) == 10,
        "the start offsets passed every record",
    )
    assert [row[4] for row in rows(tool("--describe", "--group", group))] == ["0", "0"]  # lag
    refused = run_kafka_tool(
        "kafka-share-groups", "--bootstrap-server", bootstrap, "--reset-offsets",
        "--group", group, "--topic", topic, "--to-earliest", "--execute",
    )  # fmt: skip
    assert "is not empty" in refused.stdout + refused.stderr
    member.close()
    reset = rows(
        tool("--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
    )
    assert sorted((row[2], row[3]) for row in reset) == [("0", "0"), ("1", "0")]
    described = rows(tool("--describe", "--group", group))
    assert sum(int(row[4]) for row in described) == 10  # every record is to come again
    again = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: sorted(again.values()) == sorted(sent), "the records came again")
    again.close()
    assert "Successful" in tool("--delete-offsets", "--group", group, "--topic", topic)
    assert "has no offset information" in tool("--describe", "--group", group)
    assert "was successful" in tool("--delete", "--group", group)
    assert group not in tool("--list").split()


def test_kafka_dump_log_decodes_the_share_state_and_share_group_records(
    share_broker: Broker, share_spawn: ShareMemberFactory
) -> None:
    bootstrap = share_broker.bootstrap
    topic, group = new_topic(bootstrap), unique_name("share")
    start_at_earliest(bootstrap, group)
    sent = produce_one_by_one(bootstrap, topic, (f"d-{i}" for i in range(5)))
    member = share_spawn(LIBRDKAFKA, bootstrap, topic, group)
    wait_until(lambda: sorted(member.values()) == sorted(sent), "the records were consumed")
    member.close()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    described = admin.describe_topics(TopicCollection([topic]))[topic].result(15)
    # Kafka's key: the topic id as Java's Uuid.toString (URL-safe base64; librdkafka's
    # string is standard base64)
    topic_id = str(described.topic_id).replace("+", "-").replace("/", "_")
    key = f"{group}:{topic_id}:0"

    def dumped(internal: str, partition: int, decoder: str) -> list[str]:
        directory = Path(share_broker.data_dir) / f"{internal}-{partition}"
        segments = sorted(glob.glob(str(directory / "*.log")))
        printed = kafka_tool("kafka-dump-log", "--files", ",".join(segments), decoder)
        return [line for line in printed.splitlines() if f'"groupId":"{group}"' in line]

    states = dumped(
        SHARE_STATE_TOPIC, partition_for_share_key(key, 50), "--share-group-state-decoder"
    )
    assert states and '"startOffset":5' in states[-1] and '"stateBatches":[]' in states[-1]
    groups = dumped(OFFSETS_TOPIC, partition_for_group(group, 50), "--offsets-decoder")
    kinds = {line.split('"type":"')[1].split('"')[0] for line in groups}
    assert {"10", "11", "12", "13", "14", "15"} <= kinds, kinds
    initialized = [line for line in groups if '"type":"15"' in line][-1]
    assert f'"topicName":"{topic}"' in initialized and '"partitions":[0]' in initialized


def rows(printed: str) -> list[list[str]]:
    """The rows of a table Kafka's tools print, under their header line."""
    lines = [line.split() for line in printed.strip().splitlines()]
    return [line for line in lines[1:] if line]
