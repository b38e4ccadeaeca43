"""Apache Kafka's own administration tools against a 3-broker Odradek cluster, judged on
what they print: the standard reassignment workflow (generate, execute with and without a
throttle, verify, which lifts the throttle, cancel), replication throttles set with
kafka-configs, leader election and record deletion."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster, cluster_pool, running_etcd
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from kafka_tools import kafka_tool
from mirror_harness import produce

pytestmark = pytest.mark.slow
THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")


def dynamic_configs(cluster: Cluster, kind: ResourceType, name: str) -> dict[str, str]:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    resource = ConfigResource(kind, name)
    entries = admin.describe_configs([resource])[resource].result(30)
    return {
        key: entry.value
        for key, entry in entries.items()
        if entry.source in (1, 2)  # set on the topic, or dynamically on this broker
    }


def verify_until_completed(cluster: Cluster, plan: Path, topic: str) -> str:
    """Run ``--verify`` until partition 0 of ``topic`` has moved; its last output."""
    deadline = time.monotonic() + 60
    while True:
        verified = kafka_tool("kafka-reassign-partitions", "--bootstrap-server", cluster.bootstrap,
                              "--verify", "--reassignment-json-file", str(plan))  # fmt: skip
        if f"Reassignment of partition {topic}-0 is completed." in verified:
            return verified
        assert time.monotonic() < deadline, verified
        time.sleep(1)


def reassignment_plan(path: Path, topic: str, replicas: list[int]) -> Path:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": replicas, "log_dirs": ["any"] * len(replicas)}
    ]}))  # fmt: skip
    return path


def log_bytes(cluster: Cluster, broker: int, topic: str) -> int:
    """Bytes of record batches ``broker`` holds of ``topic``'s partition 0."""
    directory = cluster.brokers[broker].data_dir / f"{topic}-0"
    return sum(path.stat().st_size for path in directory.glob("*.log"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One 3-broker cluster for the module's tests; killed and removed afterwards."""
    workdir = tmp_path_factory.mktemp("tools-cluster")
    with running_etcd(workdir) as etcd, cluster_pool(workdir / "clusters", etcd) as make:
        yield make(3)


def test_kafka_reassign_partitions_generates_executes_with_a_throttle_and_verifies(
    cluster: Cluster, tmp_path: Path
) -> None:
    topic = cluster.create_topic(2, 2, prefix="reassigned")
    first = cluster.brokers[0]
    produce(
        first, topic, [{"value": b"v" * 100, "partition": p} for p in (0, 1) for _ in range(50)]
    )
    server = ("--bootstrap-server", cluster.bootstrap)
    to_move = tmp_path / "topics.json"
    to_move.write_text(json.dumps({"topics": [{"topic": topic}], "version": 1}))

    generated = kafka_tool(
        "kafka-reassign-partitions",
        *server,
        "--generate",
        "--topics-to-move-json-file",
        str(to_move),
        "--broker-list",
        "0,1,2",
    )
    current_text, proposed_text = generated.split("Proposed partition reassignment configuration")
    current = json.loads(current_text.strip().splitlines()[-1])
    proposed = json.loads(proposed_text.strip().splitlines()[-1])
    assert {(p["topic"], p["partition"]) for p in current["partitions"]} == {(topic, 0), (topic, 1)}
    assert {len(p["replicas"]) for p in proposed["partitions"]} == {2}

    before = cluster.partition(topic, 0).replicas
    target = [next(b for b in range(3) if b not in before), before[0]]
    plan = reassignment_plan(tmp_path / "plan.json", topic, target)
    executed = kafka_tool(
        "kafka-reassign-partitions",
        *server,
        "--execute",
        "--reassignment-json-file",
        str(plan),
        "--throttle",
        "50000000",
    )
    assert "The inter-broker throttle limit was set to 50000000 B/s" in executed
    assert f"Successfully started partition reassignment for {topic}-0" in executed
    throttled = dynamic_configs(cluster, ResourceType.TOPIC, topic)
    assert f"0:{target[0]}" in throttled["follower.replication.throttled.replicas"]

    verified = verify_until_completed(cluster, plan, topic)

    assert "Clearing broker-level throttles on brokers" in verified
    assert f"Clearing topic-level throttles on topic {topic}" in verified
    assert sorted(cluster.partition(topic, 0).replicas) == sorted(target)
    for broker in ("0", "1", "2"):
        assert not set(THROTTLES) & set(dynamic_configs(cluster, ResourceType.BROKER, broker))
    assert "follower.replication.throttled.replicas" not in dynamic_configs(
        cluster, ResourceType.TOPIC, topic
    )


def test_kafka_leader_election_finds_the_preferred_leaders_already_elected(
    cluster: Cluster,
) -> None:
    topic = cluster.create_topic(2, 3, prefix="elected")

    elected = kafka_tool(
        "kafka-leader-election",
        "--bootstrap-server",
        cluster.bootstrap,
        "--election-type",
        "preferred",
        "--topic",
        topic,
        "--partition",
        "1",
    )

    assert f"Valid replica already elected for partitions {topic}-1" in elected


def test_kafka_topics_creates_and_grows_a_topic_past_one_etcd_transaction(cluster: Cluster) -> None:
    """More partitions than one etcd transaction takes (128 operations): written in steps."""
    topic = unique_name("wide")
    server = ("--bootstrap-server", cluster.bootstrap)

    created = kafka_tool("kafka-topics", *server, "--create", "--topic", topic,
                         "--partitions", "200", "--replication-factor", "3")  # fmt: skip
    kafka_tool("kafka-topics", *server, "--alter", "--topic", topic, "--partitions", "400")
    described = kafka_tool("kafka-topics", *server, "--describe", "--topic", topic)
    produce(cluster.brokers[0], topic, [{"value": b"last", "partition": 399}])
    latest = kafka_tool("kafka-get-offsets", *server, "--topic", topic, "--partitions", "399")

    assert f"Created topic {topic}." in created
    assert "PartitionCount: 400\tReplicationFactor: 3" in described, described[:500]
    led = [line for line in described.splitlines() if "\tLeader: " in line]
    assert len(led) == 400 and not [line for line in led if "Leader: none" in line], described
    assert latest.strip() == f"{topic}:399:1"


def test_kafka_delete_records_moves_the_low_watermark(cluster: Cluster, tmp_path: Path) -> None:
    topic = cluster.create_topic(1, 3, prefix="trimmed")
    produce(cluster.brokers[0], topic, [{"value": b"%d" % i} for i in range(40)])
    offsets = tmp_path / "offsets.json"
    offsets.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": 30}]})
    )
    server = ("--bootstrap-server", cluster.bootstrap)

    deleted = kafka_tool("kafka-delete-records", *server, "--offset-json-file", str(offsets))
    earliest = kafka_tool("kafka-get-offsets", *server, "--topic", topic, "--time", "earliest")

    assert f"partition: {topic}-0\tlow_watermark: 30" in deleted
    assert earliest.strip() == f"{topic}:0:30"


def test_kafka_reassign_partitions_executes_without_a_throttle_and_moves_the_leader(
    cluster: Cluster, tmp_path: Path
) -> None:
    topic = cluster.create_topic(1, 2, prefix="moved")
    produce(cluster.brokers[0], topic, [{"value": b"%d" % i} for i in range(50)])
    before = cluster.partition(topic, 0)
    spare = next(b for b in range(3) if b not in before.replicas)
    target = [spare, next(r for r in before.replicas if r != before.leader)]  # leader leaves
    plan = reassignment_plan(tmp_path / "plan.json", topic, target)
    server = ("--bootstrap-server", cluster.bootstrap)

    executed = kafka_tool(
        "kafka-reassign-partitions", *server, "--execute", "--reassignment-json-file", str(plan)
    )
    verify_until_completed(cluster, plan, topic)
    latest = kafka_tool("kafka-get-offsets", *server, "--topic", topic, "--time", "latest")

    rollback = json.loads(executed.split("Current partition replica assignment")[1].split()[0])
    # The rollback plan: where the partition was, in which log directory of each broker
    assert rollback["partitions"] == [
        {"topic": topic, "partition": 0, "replicas": list(before.replicas),
         "log_dirs": [str(cluster.brokers[r].data_dir.resolve()) for r in before.replicas]}
    ]  # fmt: skip
    assert "Save this to use as the --reassignment-json-file option during rollback" in executed
    assert f"Successfully started partition reassignment for {topic}-0" in executed
    assert "throttle" not in executed.lower()
    after = cluster.partition(topic, 0)
    assert list(after.replicas) == target and after.leader in target
    assert latest.strip() == f"{topic}:0:50"  # every record on the new replicas


def test_kafka_configs_throttles_a_reassignment_that_kafka_reassign_partitions_cancels(
    cluster: Cluster, tmp_path: Path
) -> None:
    topic = cluster.create_topic(1, 1, prefix="throttled")
    produce(cluster.brokers[0], topic, [{"value": b"x" * 100_000} for _ in range(60)])
    [source] = cluster.partition(topic, 0).replicas
    joining = (source + 1) % 3
    plan = reassignment_plan(tmp_path / "plan.json", topic, [source, joining])
    server = ("--bootstrap-server", cluster.bootstrap)
    topic_entity = ("--entity-type", "topics", "--entity-name", topic)
    cluster_wide = ("--entity-type", "brokers", "--entity-default")
    rates = "leader.replication.throttled.rate=10000,follower.replication.throttled.rate=10000"
    throttled = (
        f"leader.replication.throttled.replicas=[0:{source}],"
        f"follower.replication.throttled.replicas=[0:{joining}]"
    )

    kafka_tool("kafka-configs", *server, "--alter", *cluster_wide, "--add-config", rates)
    kafka_tool("kafka-configs", *server, "--alter", *topic_entity, "--add-config", throttled)
    described = kafka_tool("kafka-configs", *server, "--describe", *topic_entity)
    kafka_tool("kafka-reassign-partitions", *server, "--execute",
               "--reassignment-json-file", str(plan))  # fmt: skip
    verified = kafka_tool("kafka-reassign-partitions", *server, "--verify",
                          "--reassignment-json-file", str(plan))  # fmt: skip
    copied = log_bytes(cluster, joining, topic)
    cancelled = kafka_tool("kafka-reassign-partitions", *server, "--cancel",
                           "--reassignment-json-file", str(plan))  # fmt: skip
    after_cancel = kafka_tool("kafka-configs", *server, "--describe", *topic_entity)
    kafka_tool("kafka-configs", *server, "--alter", *cluster_wide, "--delete-config",
               "leader.replication.throttled.rate,follower.replication.throttled.rate")  # fmt: skip
    defaults = kafka_tool("kafka-configs", *server, "--describe", *cluster_wide)

    assert sorted(described.splitlines()[1:]) == [
        f"  follower.replication.throttled.replicas=0:{joining} sensitive=false synonyms="
        f"{{DYNAMIC_TOPIC_CONFIG:follower.replication.throttled.replicas=0:{joining}}}",
        f"  leader.replication.throttled.replicas=0:{source} sensitive=false synonyms="
        f"{{DYNAMIC_TOPIC_CONFIG:leader.replication.throttled.replicas=0:{source}}}",
    ]
    assert f"Reassignment of partition {topic}-0 is still in progress." in verified
    assert copied < 3_000_000  # of 6 MB: at 10 kB/s, little more than the first fetch
    assert f"Successfully cancelled partition reassignment for: {topic}-0" in cancelled
    assert f"Clearing topic-level throttles on topic {topic}" in cancelled
    assert list(cluster.partition(topic, 0).replicas) == [source]
    abandoned = cluster.brokers[joining].data_dir / f"{topic}-0"
    cluster.wait_until(lambda: not abandoned.exists(), "the cancelled replica's log deleted")
    assert after_cancel.splitlines() == [f"Dynamic configs for topic {topic} are:"]
    assert defaults.splitlines() == ["Default configs for brokers in the cluster are:"]
