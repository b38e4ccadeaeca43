"""Admin APIs through real admin clients: configs, partitions, records, cluster."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)
from confluent_kafka.admin import ResourceType as Resource
from kafka.admin import ConfigResource as KafkaPythonResource
from kafka.admin import ConfigResourceType, KafkaAdminClient
from kafka.admin import NewPartitions as KafkaNewPartitions
from kafka.structs import TopicPartition as KafkaTopicPartition
from kafka_wire import WireClient, build_batch

TIMEOUT = 10


def _admin(broker: Broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _create(admin: AdminClient, partitions: int = 1, **configs: str) -> str:
    name = unique_name("admin")
    admin.create_topics([NewTopic(name, partitions, 1, config=configs)])[name].result(TIMEOUT)
    return name


def _describe(admin: AdminClient, resource: ConfigResource) -> dict[str, ConfigEntry]:
    return dict(admin.describe_configs([resource])[resource].result(TIMEOUT))


def _incremental(
    admin: AdminClient, kind: Resource, name: str, key: str, value: str | None,
    op: AlterConfigOpType = AlterConfigOpType.SET,
) -> None:  # fmt: skip
    resource = ConfigResource(
        kind, name, incremental_configs=[ConfigEntry(key, value, incremental_operation=op)]
    )
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT)


def test_incremental_alter_sets_and_deletes_topic_configs(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin, **{"retention.ms": "100000"})
    _incremental(admin, Resource.TOPIC, name, "cleanup.policy", "compact")
    configs = _describe(admin, ConfigResource(Resource.TOPIC, name))
    assert configs["cleanup.policy"].value == "compact"
    assert configs["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["retention.ms"].value == "100000"
    assert configs["segment.bytes"].source == ConfigSource.DEFAULT_CONFIG.value
    _incremental(admin, Resource.TOPIC, name, "retention.ms", None, AlterConfigOpType.DELETE)
    configs = _describe(admin, ConfigResource(Resource.TOPIC, name))
    assert configs["retention.ms"].value == str(7 * 24 * 3600 * 1000)


def test_append_and_subtract_edit_list_configs(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin)
    _incremental(admin, Resource.TOPIC, name, "cleanup.policy", "compact", AlterConfigOpType.APPEND)
    assert _describe(admin, ConfigResource(Resource.TOPIC, name))["cleanup.policy"].value == (
        "compact"
    )
    _incremental(admin, Resource.TOPIC, name, "cleanup.policy", "delete", AlterConfigOpType.APPEND)
    _incremental(
        admin, Resource.TOPIC, name, "cleanup.policy", "compact", AlterConfigOpType.SUBTRACT
    )
    assert _describe(admin, ConfigResource(Resource.TOPIC, name))["cleanup.policy"].value == (
        "delete"
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("retention.ms", "soon", "retention.ms"), ("no.such.config", "1", "no.such.config")],
)
def test_invalid_topic_config_is_refused_with_invalid_config(
    broker: Broker, key: str, value: str, message: str
) -> None:
    admin = _admin(broker)
    name = _create(admin)
    with pytest.raises(KafkaException, match=message) as raised:
        _incremental(admin, Resource.TOPIC, name, key, value)
    assert raised.value.args[0].name() == "INVALID_CONFIG"


def test_kafka_python_alters_and_describes_topic_configs(broker: Broker) -> None:
    name = _create(_admin(broker))
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        resource = KafkaPythonResource(ConfigResourceType.TOPIC, name, {"retention.ms": "5000"})
        client.alter_configs([resource])
        described = client.describe_configs([KafkaPythonResource(ConfigResourceType.TOPIC, name)])
    finally:
        client.close()
    entry = described["topic"][name]["retention.ms"]
    assert entry["value"] == "5000"
    assert entry["config_source"] == "DYNAMIC_TOPIC_CONFIG"


def test_dynamic_broker_config_becomes_every_topics_default(broker_factory: BrokerFactory) -> None:
    broker = broker_factory()
    admin = _admin(broker)
    name = _create(admin)
    _incremental(admin, Resource.BROKER, "0", "log.retention.ms", "60000")
    broker_configs = _describe(admin, ConfigResource(Resource.BROKER, "0"))
    assert broker_configs["log.retention.ms"].value == "60000"
    assert broker_configs["log.retention.ms"].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    assert _describe(admin, ConfigResource(Resource.TOPIC, name))["retention.ms"].value == "60000"
    broker.restart()
    admin = _admin(broker)
    assert _describe(admin, ConfigResource(Resource.TOPIC, name))["retention.ms"].value == "60000"


def test_static_only_broker_config_cannot_change_dynamically(broker: Broker) -> None:
    refusal = r"Cannot update these configs dynamically: \[num\.partitions\]"
    with pytest.raises(KafkaException, match=refusal) as raised:
        _incremental(_admin(broker), Resource.BROKER, "0", "num.partitions", "4")
    assert raised.value.args[0].name() == "INVALID_REQUEST"  # as Kafka answers


def test_create_partitions_grows_a_topic_and_refuses_shrinking(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin, partitions=2)
    admin.create_partitions([NewPartitions(name, 5)])[name].result(TIMEOUT)
    assert len(admin.list_topics(name, timeout=TIMEOUT).topics[name].partitions) == 5
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    producer.produce(name, b"into a new partition", partition=4)
    assert producer.flush(TIMEOUT) == 0
    with pytest.raises(KafkaException) as raised:
        admin.create_partitions([NewPartitions(name, 3)])[name].result(TIMEOUT)
    assert raised.value.args[0].name() == "INVALID_PARTITIONS"


def test_a_large_topic_takes_writes_once_created_and_grown_within_the_timeout(
    broker: Broker,
) -> None:
    """The logs of most of its replicas are made off the event loop, after the topic is in
    the metadata; CreateTopics and CreatePartitions answer once they exist (or their
    timeout passes, Kafka's meaning of it), so the last partition takes a write at once."""
    admin = _admin(broker)
    name = unique_name("large")
    admin.create_topics([NewTopic(name, 400, 1)], request_timeout=60)[name].result(90)
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.produce(name, 399, bytes(build_batch([b"last"]))).error_code.value == 0
        admin.create_partitions([NewPartitions(name, 700)], request_timeout=60)[name].result(90)
        assert wire.produce(name, 699, bytes(build_batch([b"grown"]))).error_code.value == 0


def test_describe_cluster_names_this_broker_as_controller(broker: Broker) -> None:
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        cluster = client.describe_cluster()
    finally:
        client.close()
    assert [node["broker_id"] for node in cluster["brokers"]] == [0]
    assert cluster["controller_id"] == 0
    assert cluster["cluster_id"]


def _produce_timestamped(broker: Broker, name: str, count: int) -> list[int]:
    """``count`` records in a few large batches, with timestamps 1000 ms apart."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 50})
    timestamps = [1_700_000_000_000 + 1000 * index for index in range(count)]
    for index, timestamp in enumerate(timestamps):
        producer.produce(name, value=b"%d" % index, partition=0, timestamp=timestamp)
    assert producer.flush(TIMEOUT) == 0
    return timestamps


def test_offsets_for_times_are_exact_to_the_record(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin)
    timestamps = _produce_timestamped(broker, name, 50)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique_name("t")})
    try:
        for index in (0, 7, 23, 49):
            for probe in (timestamps[index], timestamps[index] - 500):
                [found] = consumer.offsets_for_times(
                    [TopicPartition(name, 0, probe)], timeout=TIMEOUT
                )
                assert found.offset == index
        [beyond] = consumer.offsets_for_times(
            [TopicPartition(name, 0, timestamps[-1] + 1)], timeout=TIMEOUT
        )
        assert beyond.offset == -1
    finally:
        consumer.close()


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat (Debian package) is not installed")
def test_kcat_query_by_timestamp_is_exact_to_the_record(broker: Broker) -> None:
    name = _create(_admin(broker))
    timestamps = _produce_timestamped(broker, name, 20)
    output = subprocess.run(
        ["kcat", "-b", broker.bootstrap, "-Q", "-t", f"{name}:0:{timestamps[13]}"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    assert "offset 13" in output


def test_delete_records_moves_the_log_start_for_both_clients(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin)
    _produce_timestamped(broker, name, 30)
    [result] = admin.delete_records([TopicPartition(name, 0, 10)], request_timeout=TIMEOUT).values()
    assert result.result(TIMEOUT).low_watermark == 10
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        answer = client.delete_records({KafkaTopicPartition(name, 0): 25})
    finally:
        client.close()
    assert answer[KafkaTopicPartition(name, 0)]["low_watermark"] == 25
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique_name("d")})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(name, 0), timeout=TIMEOUT)
    finally:
        consumer.close()
    assert (low, high) == (25, 30)


def test_kafka_python_creates_partitions(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin, partitions=1)
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        client.create_partitions({name: KafkaNewPartitions(3)})
    finally:
        client.close()
    assert len(admin.list_topics(name, timeout=TIMEOUT).topics[name].partitions) == 3


def test_confluent_alter_configs_replaces_the_whole_set(broker: Broker) -> None:
    admin = _admin(broker)
    name = _create(admin, **{"cleanup.policy": "compact"})
    resource = ConfigResource(Resource.TOPIC, name, set_config={"retention.ms": "7000"})
    admin.alter_configs([resource])[resource].result(TIMEOUT)
    configs = _describe(admin, ConfigResource(Resource.TOPIC, name))
    assert configs["retention.ms"].value == "7000"
    assert configs["cleanup.policy"].value == "delete"
