"""Consumer groups with real clients: partitions shared out, moved on leave and death, offsets kept.

Each member runs in its own process (group_consumer.py, group_members.py) so it can be SIGKILLed;
the tests read what every member reports and check that no record is lost and,
while membership is steady, none is delivered twice.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import time
from typing import Any

import confluent_kafka
import pytest
from broker_process import Broker, BrokerFactory, odradek_command, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    ResourceType,
)
from group_consumer import CONSUMER_PROTOCOL_JAVA, CONSUMER_PROTOCOL_LIBRDKAFKA
from group_members import (
    GROUP_SETTINGS,
    WAIT_S,
    Member,
    MemberFactory,
    create_topic,
    produce,
    seen,
    shares_out,
    wait_until,
)
from kafka_wire import WireClient

from odradek.broker.group.group_partition import OFFSETS_TOPIC

# the classic protocol with three clients; the KIP-848 consumer protocol with two
CLIENTS = (
    "kafka-python",
    "aiokafka",
    "confluent-kafka",
    CONSUMER_PROTOCOL_LIBRDKAFKA,
    CONSUMER_PROTOCOL_JAVA,
)
SESSION_EXPIRY_WAIT_S = 30.0

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("client", CLIENTS)
def test_members_share_partitions_and_take_over_from_leaving_and_dead_ones(
    client: str, group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic, group = create_topic(broker, 6), unique_name("group")
    members = [spawn(client, broker.bootstrap, topic, group) for _ in range(3)]
    wait_until(lambda: shares_out(members, 6, busy=3), "three members own two partitions each")

    first = produce(broker.bootstrap, topic, "steady", 20, 6)
    wait_until(lambda: first <= seen(members).keys(), "every record was consumed")
    assert all(seen(members)[value] == 1 for value in first), "a record was delivered twice"
    for member in members:
        _, partitions, values, _ = member.snapshot()
        assert {int(value.split("-")[1]) % 6 for value in values} <= set(partitions)

    members[0].close()
    wait_until(lambda: shares_out(members, 6, busy=2), "two members own the closed one's share")
    second = produce(broker.bootstrap, topic, "after-close", 20, 6)
    wait_until(lambda: second <= seen(members).keys(), "records after the close were consumed")

    members[1].kill()
    survivor = members[2]
    wait_until(
        lambda: survivor.snapshot()[1] == list(range(6)),
        "the survivor owns every partition after the killed member's session expired",
        SESSION_EXPIRY_WAIT_S,
    )
    third = produce(broker.bootstrap, topic, "after-kill", 20, 6)
    wait_until(lambda: third <= seen([survivor]).keys(), "records after the kill were consumed")
    assert (first | second | third) <= seen(members).keys(), "a record was lost"
    wait_until(
        lambda: survivor.snapshot()[3] == dict.fromkeys(range(6), 60),
        "the survivor committed everything",
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_two_groups_each_get_the_stream_and_an_idle_member_takes_over(
    client: str, group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic = create_topic(broker, 2)
    group = unique_name("crowded")
    crowded = [spawn(client, broker.bootstrap, topic, group) for _ in range(3)]
    other = spawn(client, broker.bootstrap, topic, unique_name("other"))
    wait_until(
        lambda: shares_out(crowded, 2, busy=2) and all(m.snapshot()[0] for m in crowded),
        "two of three members own a partition and the third is idle",
    )

    values = produce(broker.bootstrap, topic, "both", 20, 2)
    wait_until(lambda: values <= seen(crowded).keys(), "the crowded group got the stream")
    wait_until(lambda: values <= seen([other]).keys(), "the other group got the stream")
    idle = next(member for member in crowded if not member.snapshot()[1])
    assert not idle.snapshot()[2], "an idle member received records"

    next(member for member in crowded if member.snapshot()[1]).kill()
    wait_until(
        lambda: bool(idle.snapshot()[1]) and shares_out(crowded, 2),
        "the idle member took over the killed member's partition",
        SESSION_EXPIRY_WAIT_S,
    )
    later = produce(broker.bootstrap, topic, "later", 10, 2)
    wait_until(lambda: later <= seen(crowded).keys(), "records after the kill were consumed")


@pytest.mark.parametrize("client", CLIENTS)
def test_a_restarted_member_resumes_from_offsets_committed_before_a_broker_restart(
    client: str, broker_factory: BrokerFactory, spawn: MemberFactory
) -> None:
    broker = broker_factory(settings=GROUP_SETTINGS)
    topic, group = create_topic(broker, 3), unique_name("resume")
    consumed: set[str] = set()
    batch = produce(broker.bootstrap, topic, "first", 10, 3)
    for restart in ("kill", "stop", None):
        member = spawn(client, broker.bootstrap, topic, group)
        _read_and_commit(member, batch, consumed)
        consumed |= batch
        member.close()
        if restart is not None:
            broker.restart(clean=restart == "stop")
            batch = produce(broker.bootstrap, topic, f"after-{restart}", 10, 3)


def _read_and_commit(member: Member, batch: set[str], before: set[str]) -> None:
    """The member reads ``batch``, none of ``before`` (committed earlier), and commits."""
    wait_until(lambda: batch <= seen([member]).keys(), "the member read the new records")
    assert not seen([member]).keys() & before, "a record before the committed offset came back"
    total = len(batch | before)
    wait_until(lambda: sum(member.snapshot()[3].values()) == total, "it committed them")


@pytest.mark.parametrize("client", CLIENTS)
def test_group_describe_shows_what_the_members_see(
    client: str, group_broker: Broker, spawn: MemberFactory
) -> None:
    broker = group_broker
    topic, group = create_topic(broker, 4), unique_name("described")
    members = [spawn(client, broker.bootstrap, topic, group, max_records=1) for _ in range(2)]
    wait_until(lambda: shares_out(members, 4, busy=2), "two members own two partitions each")
    produce(broker.bootstrap, topic, "first", 10, 4)
    wait_until(lambda: all(m.snapshot()[3] for m in members), "each member committed a batch")
    produce(broker.bootstrap, topic, "more", 2, 4)  # nobody consumes these: lag for every partition

    rows = _describe(broker, group)
    expected = {}
    for member in members:
        _, partitions, _, committed = member.snapshot()
        for partition in partitions:
            offset = committed.get(partition)
            expected[partition] = (
                "-" if offset is None else str(offset),
                "12",
                "-" if offset is None else str(12 - offset),
                member.client_id,
            )
    described = {
        int(row["PARTITION"]): (
            row["CURRENT-OFFSET"],
            row["LOG-END-OFFSET"],
            row["LAG"],
            row["CLIENT-ID"],
        )
        for row in rows
    }
    assert described == expected
    # the Java tool does not print its member id; the others' must be the broker's
    known = {m.client_id: m.snapshot()[0] for m in members if client != CONSUMER_PROTOCOL_JAVA}
    for row in rows:
        assert row["CONSUMER-ID"] == known.get(row["CLIENT-ID"], row["CONSUMER-ID"])
    assert {row["HOST"] for row in rows} == {"/127.0.0.1"}

    metrics = broker.metrics_text()
    for partition, (_, _, lag, _) in expected.items():
        if lag != "-":
            pattern = (
                rf'odradek_consumer_lag\{{group="{group}",partition="{partition}",'
                rf'topic="{topic}"\}} ([0-9.]+)'
            )
            found = re.search(pattern, metrics)
            assert found is not None and float(found.group(1)) == int(lag)


def _describe(broker: Broker, group: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        [*odradek_command(), "group", "describe", group, "--bootstrap-server", broker.bootstrap,
         "--timeout", "15", "-q"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Group {group}: Stable, ") and "2 member(s)" in lines[0], lines
    header = lines[1].split()
    return [dict(zip(header, line.split(), strict=True)) for line in lines[2:]]


def test_a_static_member_back_within_its_session_gets_its_partitions_without_a_rebalance(
    broker_factory: BrokerFactory, spawn: MemberFactory
) -> None:
    broker = broker_factory(settings=GROUP_SETTINGS)
    topic, group = create_topic(broker, 4), unique_name("static")
    crashing = spawn("confluent-kafka", broker.bootstrap, topic, group, instance_id="a")
    steady = spawn("confluent-kafka", broker.bootstrap, topic, group, instance_id="b")
    wait_until(lambda: shares_out([crashing, steady], 4, busy=2), "both own two partitions")
    owned, assignments = crashing.snapshot()[1], steady.assignments
    rebalances = _rebalances(broker)

    crashing.kill()  # no LeaveGroup: a static member's place waits for its session
    back = spawn("confluent-kafka", broker.bootstrap, topic, group, instance_id="a")
    wait_until(lambda: back.snapshot()[1] == owned, "the instance got its partitions back")
    assert (steady.assignments, _rebalances(broker)) == (assignments, rebalances)
    values = produce(broker.bootstrap, topic, "static", 5, 4)
    wait_until(lambda: values <= seen([back, steady]).keys(), "both consumed their share")


def _rebalances(broker: Broker) -> float:
    found = re.search(r"^odradek_group_rebalances_total ([0-9.]+)$", broker.metrics_text(), re.M)
    assert found is not None
    return float(found.group(1))


@pytest.mark.parametrize("client", ["confluent-kafka", CONSUMER_PROTOCOL_LIBRDKAFKA])
def test_a_new_coordinator_loads_the_group_when_the_old_one_dies(
    client: str, cluster_factory: ClusterFactory, spawn: MemberFactory
) -> None:
    cluster = cluster_factory(3, settings={**GROUP_SETTINGS, "offsets.topic.num.partitions": "3"})
    bootstrap = cluster.bootstrap
    topic, group = cluster.create_topic(3), unique_name("failover")
    first = spawn(client, bootstrap, topic, group)
    wait_until(lambda: first.snapshot()[1] == [0, 1, 2], "the member owns every partition")
    before = produce(bootstrap, topic, "before", 10, 3)
    wait_until(lambda: sum(first.snapshot()[3].values()) == 30, "the member committed them")

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    old = _coordinator(admin, group)
    cluster.kill(old)
    cluster.wait_until(lambda: _coordinator(admin, group) != old, "another broker coordinates")
    assert _committed(admin, group) == dict.fromkeys(range(3), 10), "committed offsets were lost"

    # a second member forces a rebalance: partitions move and their new owners start
    # from the offsets the new coordinator loaded, so nothing before them comes back
    second = spawn(client, bootstrap, topic, group)
    wait_until(lambda: shares_out([first, second], 3, busy=2), "both members own partitions")
    after = produce(bootstrap, topic, "after", 10, 3)
    wait_until(lambda: after <= seen([first, second]).keys(), "both consumed the new records")
    assert all(seen([first, second])[value] == 1 for value in before), "re-read committed records"
    wait_until(lambda: _committed(admin, group) == dict.fromkeys(range(3), 20), "commits went on")


def _coordinator(admin: AdminClient, group: str) -> int:
    description = admin.describe_consumer_groups([group])[group].result(WAIT_S)
    return int(description.coordinator.id)


def _committed(admin: AdminClient, group: str) -> dict[int, int]:
    request = [confluent_kafka.ConsumerGroupTopicPartitions(group)]
    found = admin.list_consumer_group_offsets(request)[group].result(WAIT_S)
    return {tp.partition: tp.offset for tp in found.topic_partitions if tp.offset >= 0}


def test_metadata_for_the_offsets_topic_creates_it_with_its_own_layout(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(settings={"offsets.topic.num.partitions": "7"})
    with WireClient.to(broker.bootstrap) as wire:
        (topic,) = wire.metadata([OFFSETS_TOPIC], auto_create=True).topics
        listed = {item.name: item.is_internal for item in wire.metadata(None).topics}
    assert (len(topic.partitions), topic.is_internal) == (7, True)
    assert listed[OFFSETS_TOPIC] is True, "'all topics' lists internal topics, flagged, as Kafka"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, OFFSETS_TOPIC)
    configs = admin.describe_configs([resource])[resource].result(15)
    assert configs["cleanup.policy"].value == "compact"


def test_group_commands_reset_list_and_delete_like_kafka_consumer_groups(
    group_broker: Broker, spawn: MemberFactory
) -> None:
    topic, group = create_topic(group_broker, 2), unique_name("admin")
    produce(group_broker.bootstrap, topic, "old", 5, 2)
    time.sleep(0.05)
    middle = time.time()
    time.sleep(0.05)
    produce(group_broker.bootstrap, topic, "new", 5, 2)

    def odradek(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        argv = [*odradek_command(), "group", *args, "--bootstrap-server", group_broker.bootstrap,
                "--timeout", "15"]  # fmt: skip
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert (done.returncode == 0) == ok, done.stderr
        return done

    def new_offsets(done: subprocess.CompletedProcess[str]) -> dict[int, int]:
        rows = [line.split() for line in done.stdout.splitlines()[1:]]
        return {int(row[2]): int(row[4]) for row in rows}

    admin = AdminClient({"bootstrap.servers": group_broker.bootstrap})
    planned = odradek("reset-offsets", group, "--topic", topic, "--to-offset", "7")
    assert new_offsets(planned) == {0: 7, 1: 7}
    assert _committed(admin, group) == {}, "a dry run committed"
    odradek("reset-offsets", group, "--topic", topic, "--to-latest", "--execute")
    assert _committed(admin, group) == {0: 10, 1: 10}
    at = datetime.datetime.fromtimestamp(middle, datetime.UTC).isoformat()
    odradek("reset-offsets", group, "--topic", f"{topic}:0", "--to-datetime", at, "--execute")
    assert _committed(admin, group) == {0: 5, 1: 10}
    odradek("reset-offsets", group, "--all-topics", "--to-earliest", "--execute")
    assert _committed(admin, group) == {0: 0, 1: 0}
    assert f"{group} Classic Empty" in " ".join(odradek("list").stdout.split())

    member = spawn("confluent-kafka", group_broker.bootstrap, topic, group)
    wait_until(lambda: member.snapshot()[1] == [0, 1], "a member joined")
    refused = odradek("reset-offsets", group, "--all-topics", "--to-latest", "--execute", ok=False)
    assert "active members" in refused.stderr
    member.close()
    odradek("delete", group)
    assert group not in odradek("list").stdout
    assert "does not exist" in odradek("describe", group, ok=False).stderr
