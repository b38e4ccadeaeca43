"""The KIP-848 consumer group protocol with real clients, beyond the scenarios every
protocol shares (test_consumer_groups.py runs those with librdkafka and the Java client on
``group.protocol=consumer`` too): incremental rebalances that do not pause the partitions
that stay, static members, regular-expression subscriptions, rack-aware assignment, live
groups changing protocol member by member, and Kafka's own tools reading the groups and
their records."""

from __future__ import annotations

import glob
import itertools
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka
import pytest
from broker_process import Broker, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from group_consumer import CONSUMER_PROTOCOL_JAVA, CONSUMER_PROTOCOL_LIBRDKAFKA
from group_members import (
    GROUP_SETTINGS,
    Member,
    MemberFactory,
    create_topic,
    produce,
    seen,
    shares_out,
    wait_until,
)
from kafka_tools import kafka_tool

from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group

pytestmark = pytest.mark.slow
# records every 10 ms on each partition while a member joins; the longest silence of a
# partition that keeps its owner is what a rebalance cost it
PRODUCE_INTERVAL_S = 0.01
LONGEST_PAUSE_S = 1.5


class Flow:
    """A producer writing to every partition of a topic, steadily, until stopped."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.values: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(bootstrap, topic, partitions), daemon=True
        )
        self._thread.start()

    def _run(self, bootstrap: str, topic: str, partitions: int) -> None:
        producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
        index = 0
        while not self._stop.is_set():
            for partition in range(partitions):
                value = f"flow-{index}"
                producer.produce(topic, value=value.encode(), partition=partition)
                self.values.add(value)
                index += 1
            producer.poll(0)
            time.sleep(PRODUCE_INTERVAL_S)
        assert producer.flush(15) == 0

    def stop(self) -> set[str]:
        self._stop.set()
        self._thread.join(30)
        return self.values


def longest_pause(member: Member, partition: int, start: float, end: float) -> float:
    """The longest gap between records of ``partition`` reaching ``member`` in the window."""
    times = sorted(t for t, p in member.snapshot_arrivals() if p == partition)
    inside = [t for t in times if start <= t <= end]
    before = [t for t in times if t < start]
    points = ([before[-1]] if before else []) + inside
    if not points:
        return end - start
    gaps = [later - earlier for earlier, later in itertools.pairwise(points)]
    return max([*gaps, end - points[-1]])


@pytest.mark.parametrize("client", [CONSUMER_PROTOCOL_LIBRDKAFKA, CONSUMER_PROTOCOL_JAVA])
def test_a_joining_member_takes_its_share_while_the_other_partitions_keep_flowing(
    client: str, group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic, group = create_topic(broker, 6), unique_name("incremental")
    first = [spawn(client, broker.bootstrap, topic, group) for _ in range(2)]
    wait_until(lambda: shares_out(first, 6, busy=2), "two members own three partitions each")
    flow = Flow(broker.bootstrap, topic, 6)
    time.sleep(2)
    before = {id(m): set(m.snapshot()[1]) for m in first}
    joined_at = time.monotonic()
    newcomer = spawn(client, broker.bootstrap, topic, group)
    members = [*first, newcomer]
    wait_until(lambda: shares_out(members, 6, busy=3), "three members own two partitions each")
    settled_at = time.monotonic()
    time.sleep(1)
    values = flow.stop()
    wait_until(lambda: values <= seen(members).keys(), "every record was consumed")

    kept = {
        partition: member
        for member in first
        for partition in before[id(member)] & set(member.snapshot()[1])
    }
    assert len(kept) == 4, "more partitions moved than the newcomer's two"
    pauses = {
        partition: longest_pause(member, partition, joined_at, settled_at + 1)
        for partition, member in kept.items()
    }
    print(
        f"{client}: a member joined in {settled_at - joined_at:.2f} s; longest pause of the "
        f"partitions that stayed: {max(pauses.values()):.3f} s"
    )
    assert max(pauses.values()) < LONGEST_PAUSE_S, pauses


def test_a_static_member_that_leaves_and_comes_back_gets_its_partitions_without_a_rebalance(
    group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic, group = create_topic(broker, 4), unique_name("static")
    client = CONSUMER_PROTOCOL_LIBRDKAFKA
    leaving = spawn(client, broker.bootstrap, topic, group, instance_id="a")
    steady = spawn(client, broker.bootstrap, topic, group, instance_id="b")
    wait_until(lambda: shares_out([leaving, steady], 4, busy=2), "both own two partitions")
    owned, assignments = leaving.snapshot()[1], steady.assignments
    epoch = broker.metric("odradek_consumer_group_epoch", group=group)

    leaving.close()  # a static member leaves with epoch -2: its partitions wait for it
    back = spawn(client, broker.bootstrap, topic, group, instance_id="a")
    wait_until(lambda: back.snapshot()[1] == owned, "the instance got its partitions back")
    assert steady.assignments == assignments, "the steady member was rebalanced"
    assert broker.metric("odradek_consumer_group_epoch", group=group) == epoch
    assert broker.metric("odradek_consumer_group_members", group=group) == 2
    values = produce(broker.bootstrap, topic, "static", 5, 4)
    wait_until(lambda: values <= seen([back, steady]).keys(), "both consumed their share")


def test_a_regex_subscription_follows_topics_created_later(group_broker: Broker) -> None:
    broker = group_broker
    prefix = unique_name("rx")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topics = {f"{prefix}-a": 2, f"{prefix}-b": 1, f"other-{prefix}": 1}
    for future in admin.create_topics([NewTopic(n, p, 1) for n, p in topics.items()]).values():
        future.result(15)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": unique_name("regex"),
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe([f"^{prefix}-.*"])

        def assigned() -> set[tuple[str, int]]:
            consumer.poll(0.1)
            return {(tp.topic, tp.partition) for tp in consumer.assignment()}

        wait_until(
            lambda: assigned() == {(f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0)},
            "the consumer owns the matching topics, and not the other",
        )
        admin.create_topics([NewTopic(f"{prefix}-c", 1, 1)])[f"{prefix}-c"].result(15)
        wait_until(lambda: (f"{prefix}-c", 0) in assigned(), "it took the new matching topic")
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce(f"{prefix}-c", value=b"late")
        assert producer.flush(15) == 0
        found: list[bytes] = []
        wait_until(
            lambda: (
                found.extend(
                    m.value() or b"" for m in consumer.consume(10, 0.2) if m.error() is None
                )
                or b"late" in found
            ),
            "the record on the new topic was consumed",
        )
    finally:
        consumer.close()


@pytest.fixture
def two_kinds(group_broker: Broker, spawn: MemberFactory) -> Iterator[tuple[str, str, str]]:
    """A classic group (librdkafka, classic protocol) and a consumer group (the Java
    client, consumer protocol) reading one topic: (topic, classic group, consumer group)."""
    broker = group_broker
    topic = create_topic(broker, 2)
    classic, modern = unique_name("classic"), unique_name("modern")
    members = [
        spawn("confluent-kafka", broker.bootstrap, topic, classic),
        spawn(CONSUMER_PROTOCOL_JAVA, broker.bootstrap, topic, modern),
    ]
    for member in members:
        wait_until(lambda m=member: shares_out([m], 2), "each group's member owns the topic")
    values = produce(broker.bootstrap, topic, "tools", 5, 2)
    for member in members:
        wait_until(lambda m=member: sum(m.snapshot()[3].values()) == 10, "each committed")
    assert all(values <= seen([m]).keys() for m in members)
    yield topic, classic, modern


def _table(output: str) -> list[dict[str, str]]:
    lines = [line for line in output.splitlines() if line.strip()]
    header = lines[0].split()
    return [dict(zip(header, line.split(), strict=False)) for line in lines[1:]]


def test_kafka_consumer_groups_lists_and_describes_both_kinds_of_group(
    group_broker: Broker, two_kinds: tuple[str, str, str]
) -> None:
    topic, classic, modern = two_kinds
    server = ("--bootstrap-server", group_broker.bootstrap)
    listed = {row["GROUP"]: row["TYPE"] for row in _table(kafka_tool(
        "kafka-consumer-groups", *server, "--list", "--type"))}  # fmt: skip
    assert (listed[classic], listed[modern]) == ("Classic", "Consumer")

    states = {}
    for group in (classic, modern):
        (row,) = _table(kafka_tool("kafka-consumer-groups", *server, "--describe", "--group",
                                   group, "--state"))  # fmt: skip
        states[group] = (row["ASSIGNMENT-STRATEGY"], row["STATE"], row["#MEMBERS"])
    assert states == {classic: ("range", "Stable", "1"), modern: ("uniform", "Stable", "1")}

    (member,) = _table(kafka_tool("kafka-consumer-groups", *server, "--describe", "--group",
                                  modern, "--members", "--verbose"))  # fmt: skip
    assert member["CURRENT-EPOCH"] == member["TARGET-EPOCH"] != "-"
    assert member["CURRENT-ASSIGNMENT"] == member["TARGET-ASSIGNMENT"] == f"{topic}:0,1"
    for group in (classic, modern):
        offsets = _table(kafka_tool("kafka-consumer-groups", *server, "--describe", "--group",
                                    group))  # fmt: skip
        assert {(r["PARTITION"], r["CURRENT-OFFSET"], r["LAG"]) for r in offsets} == {
            ("0", "5", "0"),
            ("1", "5", "0"),
        }


def test_kafka_dump_log_decodes_the_consumer_group_records(
    group_broker: Broker, two_kinds: tuple[str, str, str]
) -> None:
    topic, _, modern = two_kinds
    partition = partition_for_group(modern, 50)
    segments = glob.glob(str(Path(group_broker.data_dir) / f"{OFFSETS_TOPIC}-{partition}/*.log"))
    dumped = kafka_tool("kafka-dump-log", "--files", ",".join(sorted(segments)),
                        "--offsets-decoder", "--print-data-log")  # fmt: skip
    mine = [line for line in dumped.splitlines() if f'"groupId":"{modern}"' in line]
    kinds = {line.split('"type":"')[1].split('"')[0] for line in mine}
    assert {"3", "5", "6", "7", "8"} <= kinds, kinds
    member_metadata = next(line for line in mine if '"type":"5"' in line)
    assert f'"subscribedTopicNames":["{topic}"]' in member_metadata
    assert '"clientId":"java-consumer-protocol-' in member_metadata
    assignment = [line for line in mine if '"type":"8"' in line][-1]
    assert '"partitions":[0,1]' in assignment and '"state":0' in assignment


def _group_type(broker: Broker, group: str) -> str:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups().result(15).valid
    (found,) = [g for g in listed if g.group_id == group]
    return str(found.type.name).lower()


def _committed(broker: Broker, group: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    request = [confluent_kafka.ConsumerGroupTopicPartitions(group)]
    found = admin.list_consumer_group_offsets(request)[group].result(15)
    return {tp.partition: tp.offset for tp in found.topic_partitions if tp.offset >= 0}


@pytest.mark.parametrize("modern_client", [CONSUMER_PROTOCOL_LIBRDKAFKA, CONSUMER_PROTOCOL_JAVA])
def test_a_live_group_upgrades_and_downgrades_member_by_member_without_losing_offsets(
    modern_client: str, group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic, group = create_topic(broker, 4), unique_name("migrating")
    classic = [spawn("confluent-kafka", broker.bootstrap, topic, group) for _ in range(2)]
    wait_until(lambda: shares_out(classic, 4, busy=2), "two classic members share the topic")
    first = produce(broker.bootstrap, topic, "classic", 10, 4)
    wait_until(lambda: _committed(broker, group) == dict.fromkeys(range(4), 10), "committed")
    assert _group_type(broker, group) == "classic"

    modern = spawn(modern_client, broker.bootstrap, topic, group)
    members = [*classic, modern]
    wait_until(lambda: shares_out(members, 4, busy=3), "the consumer-protocol member got a share")
    assert _group_type(broker, group) == "consumer"
    second = produce(broker.bootstrap, topic, "mixed", 10, 4)
    wait_until(lambda: second <= seen(members).keys(), "the mixed group consumed the records")
    wait_until(lambda: _committed(broker, group) == dict.fromkeys(range(4), 20), "committed")

    modern.close()
    wait_until(lambda: shares_out(classic, 4, busy=2), "the classic members took its share")
    wait_until(lambda: _group_type(broker, group) == "classic", "the group is classic again")
    third = produce(broker.bootstrap, topic, "downgraded", 10, 4)
    wait_until(lambda: third <= seen(classic).keys(), "the classic group consumed the records")
    wait_until(lambda: _committed(broker, group) == dict.fromkeys(range(4), 30), "committed")
    counts = seen(members)
    assert (first | second | third) <= counts.keys(), "a record was lost"
    assert all(counts[value] == 1 for value in first), "committed records were read again"


def test_the_uniform_assignor_gives_members_the_partitions_of_their_rack(
    cluster_factory: ClusterFactory,
) -> None:
    settings = {**GROUP_SETTINGS, "offsets.topic.replication.factor": "2"}
    cluster = cluster_factory(2, racks=("east", "west"), settings=settings)
    topic = cluster.create_topic(4, replication_factor=1)
    rack_of = {broker.node_id: broker.rack for broker in cluster.state().brokers}
    local = {
        rack: {p.partition for p in cluster.state().partitions if p.topic == topic
               and rack_of[p.replicas[0]] == rack}
        for rack in ("east", "west")
    }  # fmt: skip
    assert len(local["east"]) == len(local["west"]) == 2, local
    group = unique_name("racks")
    consumers = {
        rack: confluent_kafka.Consumer(
            {
                "bootstrap.servers": cluster.bootstrap,
                "group.id": group,
                "group.protocol": "consumer",
                "client.rack": rack,
            }
        )
        for rack in ("west", "east")
    }
    try:
        for consumer in consumers.values():
            consumer.subscribe([topic])

        def owned() -> dict[str, set[int]]:
            for consumer in consumers.values():
                consumer.poll(0.1)
            return {r: {tp.partition for tp in c.assignment()} for r, c in consumers.items()}

        try:
            wait_until(lambda: owned() == local, "each member owns its rack's partitions")
        except AssertionError as error:
            raise AssertionError(f"{error}: {owned()} != {local}") from None
    finally:
        for consumer in consumers.values():
            consumer.close()
