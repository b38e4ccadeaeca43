"""Apache Kafka's own administration tools against a 3-broker Odradek cluster, judged on
what they print: the standard reassignment workflow (generate, execute with a throttle,
verify, which lifts the throttle), leader election and record deletion."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
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
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": topic, "partition": 0, "replicas": target, "log_dirs": ["any", "any"]}
                ],
            }
        )
    )
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

    deadline = time.monotonic() + 60
    while True:
        verified = kafka_tool(
            "kafka-reassign-partitions", *server, "--verify", "--reassignment-json-file", str(plan)
        )
        if f"Reassignment of partition {topic}-0 is completed." in verified:
            break
        assert time.monotonic() < deadline, verified
        time.sleep(1)

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
