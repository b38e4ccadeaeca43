"""Real Kafka clients against a real broker (issue 2, "What it must show" point 1).

kafka-python, aiokafka and confluent-kafka each produce with every codec, and
every client consumes what each produced (assign + seek, no group): keys,
values (empty and null), headers and timestamps round-trip exactly, offsets
are contiguous; batches are stored with the producer's codec. Also:
kafka-python's default idempotent producer, consuming from inside a batch,
ListOffsets, admin CreateTopics/DeleteTopics and DescribeConfigs through
confluent-kafka and kafka-python, and LogAppendTime topics.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import kafka
import pytest
from broker_process import Broker, unique_name
from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)
from kafka.admin import ConfigResource as KPConfigResource
from kafka.admin import ConfigResourceType as KPConfigResourceType
from kafka_clients import (
    BEGINNING,
    CLIENTS,
    CODECS,
    CREATE_TIME,
    LOG_APPEND_TIME,
    Client,
    InRecord,
    KafkaPythonClient,
    OutRecord,
)
from kafka_wire import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, WireClient, build_batch, parse_batches

NO_ERROR = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
TOPIC_ALREADY_EXISTS = 36
INVALID_PARTITIONS = 37
INVALID_REPLICATION_FACTOR = 38

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
CLOCK_SLACK_MS = 5_000


def sample_records() -> list[OutRecord]:
    """Records covering the corners: null key, null and empty value, binary and
    unicode data, duplicate and empty headers, explicit timestamps out of
    order, producer-stamped timestamps, a large compressible value."""
    explicit = [
        OutRecord(b"key-0", b"value-0", (("h1", b"v1"),), timestamp_ms=1_600_000_000_123),
        OutRecord(None, b"no key", (), timestamp_ms=1_500_000_000_000),
        OutRecord(b"tombstone", None, (("why", b"deleted"),), timestamp_ms=1_700_000_000_001),
        OutRecord(
            b"empty",
            b"",
            (("empty-header", b""), ("dup", b"1"), ("dup", b"2")),
            timestamp_ms=1_700_000_000_002,
        ),
        OutRecord(
            b"\x00\xffbinary\x00",
            bytes(range(256)) * 16,
            (("bin", bytes(range(256))),),
            timestamp_ms=1_650_000_000_000,
        ),
        OutRecord(
            "ключ".encode(),
            "значение ☃".encode(),
            (("ünïcode", "✓".encode()),),
            timestamp_ms=1_700_000_000_003,
        ),
        OutRecord(b"large", b"odradek commit log " * 5_000, (), timestamp_ms=1_700_000_000_004),
    ]
    stamped = [OutRecord(f"k{i}".encode(), f"value {i} ".encode() * i) for i in range(40)]
    return explicit + stamped


@dataclass
class Produced:
    """The outcome of producing ``sample_records()`` once."""

    topic: str
    records: list[OutRecord]
    offsets: list[int]
    sent_from_ms: int
    sent_until_ms: int


def assert_round_trip(produced: Produced, consumed: list[InRecord]) -> None:
    """Consumed records equal the produced ones, field by field, at offsets 0..n-1."""
    assert [r.offset for r in consumed] == list(range(len(produced.records)))
    for sent, got in zip(produced.records, consumed, strict=True):
        where = f"offset {got.offset}"
        assert got.key == sent.key, where
        assert got.value == sent.value, where
        assert got.headers == sent.headers, where
        assert got.timestamp_type == CREATE_TIME, where
        if sent.timestamp_ms is not None:
            assert got.timestamp_ms == sent.timestamp_ms, where
        else:
            low, high = produced.sent_from_ms - CLOCK_SLACK_MS, produced.sent_until_ms
            assert low <= got.timestamp_ms <= high + CLOCK_SLACK_MS, where


def create_topic(broker: Broker, prefix: str) -> str:
    topic = unique_name(prefix)
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(topic, auto_create=True)
    return topic


@pytest.fixture(scope="module")
def produce_once(broker: Broker) -> Callable[[Client, str], Produced]:
    """Produce ``sample_records()`` with (client, codec) once per module and remember it."""
    outcomes: dict[tuple[str, str], Produced | BaseException] = {}

    def produce(client: Client, codec: str) -> Produced:
        key = (client.name, codec)
        if key not in outcomes:
            try:
                topic = create_topic(broker, f"compat-{client.name}-{codec}")
                records = sample_records()
                start = int(time.time() * 1000)
                offsets = client.produce(broker.bootstrap, topic, 0, records, codec)
                outcomes[key] = Produced(topic, records, offsets, start, int(time.time() * 1000))
            except Exception as error:  # remembered so dependent tests fail fast and the same
                outcomes[key] = error
        outcome = outcomes[key]
        if isinstance(outcome, BaseException):
            raise AssertionError(f"producing with {client.name}/{codec} failed") from outcome
        return outcome

    return produce


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("producer", CLIENTS, ids=str)
def test_producer_gets_contiguous_offsets_from_zero(
    produce_once: Callable[[Client, str], Produced], producer: Client, codec: str
) -> None:
    produced = produce_once(producer, codec)
    assert produced.offsets == list(range(len(produced.records)))


@pytest.mark.parametrize("consumer", CLIENTS, ids=str)
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("producer", CLIENTS, ids=str)
def test_consumer_reads_back_exactly_what_producer_sent(
    broker: Broker,
    produce_once: Callable[[Client, str], Produced],
    producer: Client,
    codec: str,
    consumer: Client,
) -> None:
    produced = produce_once(producer, codec)
    consumed = consumer.consume(
        broker.bootstrap, produced.topic, 0, BEGINNING, len(produced.records)
    )
    assert_round_trip(produced, consumed)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("producer", CLIENTS, ids=str)
def test_stored_batches_keep_the_producer_codec(
    broker: Broker, produce_once: Callable[[Client, str], Produced], producer: Client, codec: str
) -> None:
    """Batches are stored as received: a fetch returns them with the producer's codec.

    librdkafka only compresses with lz4 when the broker advertises FindCoordinator
    (its "LZ4" feature flag dates from Kafka 0.8.2), so this also checks that.
    """
    produced = produce_once(producer, codec)
    with WireClient.to(broker.bootstrap) as wire:
        answer = wire.fetch(produced.topic, 0, 0, max_bytes=16 << 20)
    batches, _ = parse_batches(bytes(answer.records or b""))
    assert batches, "fetch returned no batch"
    assert {b.attributes & 0x07 for b in batches} == {CODEC_IDS[codec]}


def test_kafka_python_default_producer_is_idempotent(broker: Broker) -> None:
    """kafka-python 3 enables idempotence by default: batches carry a producer id and
    sequences that continue across sends."""
    assert kafka.KafkaProducer.DEFAULT_CONFIG["enable_idempotence"] is True
    topic = create_topic(broker, "idempotent-kafka-python")
    client = KafkaPythonClient()
    first = client.produce(broker.bootstrap, topic, 0, [OutRecord(b"k", b"a")] * 3)
    second = client.produce(broker.bootstrap, topic, 0, [OutRecord(b"k", b"b")] * 2)
    assert first + second == [0, 1, 2, 3, 4]
    with WireClient.to(broker.bootstrap) as wire:
        batches, _ = parse_batches(bytes(wire.fetch(topic, 0, 0).records or b""))
    assert sum(b.records_count for b in batches) == 5
    assert all(b.producer_id >= 0 and b.producer_epoch >= 0 for b in batches), batches
    for batch in batches:
        # Two producer instances: each starts at sequence 0 under its own producer id.
        same_producer = [b for b in batches if b.producer_id == batch.producer_id]
        expected = sum(b.records_count for b in same_producer if b.base_offset < batch.base_offset)
        assert batch.base_sequence == expected, batches


@pytest.mark.parametrize("codec", ["none", "lz4"])
@pytest.mark.parametrize("consumer", CLIENTS, ids=str)
def test_consumer_starting_inside_a_batch_gets_records_from_that_offset(
    broker: Broker, consumer: Client, codec: str
) -> None:
    topic = create_topic(broker, f"mid-batch-{codec}")
    values = [f"record {i}".encode() for i in range(10)]
    with WireClient.to(broker.bootstrap) as wire:
        answer = wire.produce(topic, 0, bytes(build_batch(values, compression=CODEC_IDS[codec])))
        assert (answer.error_code.value, answer.base_offset) == (NO_ERROR, 0)
        # A fetch from inside the batch returns the whole batch.
        batches, _ = parse_batches(bytes(wire.fetch(topic, 0, 5).records or b""))
        assert [(b.base_offset, b.records_count) for b in batches] == [(0, 10)]

    consumed = consumer.consume(broker.bootstrap, topic, 0, 5, 5)
    assert [(r.offset, r.value) for r in consumed] == list(enumerate(values))[5:]


@pytest.mark.parametrize("client", CLIENTS, ids=str)
def test_list_offsets_reports_earliest_and_latest(broker: Broker, client: Client) -> None:
    topic = create_topic(broker, "list-offsets")
    assert client.offsets(broker.bootstrap, topic, 0) == (0, 0)
    records = [OutRecord(b"k", str(i).encode()) for i in range(7)]
    client.produce(broker.bootstrap, topic, 0, records)
    assert client.offsets(broker.bootstrap, topic, 0) == (0, 7)
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.list_offset(topic, 0, EARLIEST_TIMESTAMP) == 0
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == 7


# -- admin: CreateTopics, DeleteTopics, DescribeConfigs --------------------------------------


class Admin:
    """The admin operations the tests need; error results are Kafka error codes."""

    name: str

    def create(
        self,
        topic: str,
        partitions: int,
        replication: int = 1,
        validate_only: bool = False,
        configs: dict[str, str] | None = None,
    ) -> int:
        raise NotImplementedError

    def delete(self, topic: str) -> int:
        raise NotImplementedError

    def partition_counts(self) -> dict[str, int]:
        raise NotImplementedError

    def topic_configs(self, topic: str) -> dict[str, str | None]:
        raise NotImplementedError

    def broker_configs(self) -> dict[str, str | None]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return self.name


class ConfluentAdmin(Admin):
    name = "confluent-kafka"

    def __init__(self, bootstrap: str) -> None:
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    @staticmethod
    def _code(future: Any) -> int:
        try:
            future.result(timeout=15)
        except KafkaException as error:
            return int(error.args[0].code())
        return NO_ERROR

    def create(
        self,
        topic: str,
        partitions: int,
        replication: int = 1,
        validate_only: bool = False,
        configs: dict[str, str] | None = None,
    ) -> int:
        new = NewTopic(
            topic, num_partitions=partitions, replication_factor=replication, config=configs or {}
        )
        futures = self.admin.create_topics([new], validate_only=validate_only, request_timeout=15)
        return self._code(futures[topic])

    def delete(self, topic: str) -> int:
        return self._code(self.admin.delete_topics([topic], request_timeout=15)[topic])

    def partition_counts(self) -> dict[str, int]:
        metadata = self.admin.list_topics(timeout=10)
        return {name: len(t.partitions) for name, t in metadata.topics.items() if t.error is None}

    def _configs(self, resource: ConfigResource) -> dict[str, str | None]:
        entries = self.admin.describe_configs([resource], request_timeout=15)[resource].result(15)
        return {name: entry.value for name, entry in entries.items()}

    def topic_configs(self, topic: str) -> dict[str, str | None]:
        return self._configs(ConfigResource(ResourceType.TOPIC, topic))

    def broker_configs(self) -> dict[str, str | None]:
        broker_id = next(iter(self.admin.list_topics(timeout=10).brokers))
        return self._configs(ConfigResource(ResourceType.BROKER, str(broker_id)))


class KafkaPythonAdmin(Admin):
    name = "kafka-python"

    def __init__(self, bootstrap: str) -> None:
        self.admin = kafka.KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15000)

    def create(
        self,
        topic: str,
        partitions: int,
        replication: int = 1,
        validate_only: bool = False,
        configs: dict[str, str] | None = None,
    ) -> int:
        spec = {
            topic: {
                "num_partitions": partitions,
                "replication_factor": replication,
                "configs": configs or {},
            }
        }
        result = self.admin.create_topics(spec, validate_only=validate_only, raise_errors=False)
        (answer,) = result["topics"]
        return int(answer["error_code"])

    def delete(self, topic: str) -> int:
        (answer,) = self.admin.delete_topics([topic], raise_errors=False)["topics"]
        return int(answer["error_code"])

    def partition_counts(self) -> dict[str, int]:
        cluster = self.admin.describe_topics()
        return {t["name"]: len(t["partitions"]) for t in cluster if t["error_code"] == 0}

    def _configs(self, resource: KPConfigResource) -> dict[str, str | None]:
        described = self.admin.describe_configs([resource], config_filter="all")
        entries = described[resource.resource_type.name.lower()][resource.name]
        return {name: (e["value"] if isinstance(e, dict) else e) for name, e in entries.items()}

    def topic_configs(self, topic: str) -> dict[str, str | None]:
        return self._configs(KPConfigResource(KPConfigResourceType.TOPIC, topic))

    def broker_configs(self) -> dict[str, str | None]:
        broker_id = self.admin.describe_cluster()["brokers"][0]["broker_id"]
        return self._configs(KPConfigResource(KPConfigResourceType.BROKER, str(broker_id)))

    def close(self) -> None:
        self.admin.close()


ADMINS: dict[str, Callable[[str], Admin]] = {
    "confluent-kafka": ConfluentAdmin,
    "kafka-python": KafkaPythonAdmin,
}


@pytest.fixture(params=sorted(ADMINS))
def admin(request: pytest.FixtureRequest, broker: Broker) -> Iterator[Admin]:
    client = ADMINS[request.param](broker.bootstrap)
    try:
        yield client
    finally:
        client.close()


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_admin_creates_topic_with_requested_partitions_then_deletes_it(admin: Admin) -> None:
    topic = unique_name("admin-create")
    assert admin.create(topic, partitions=3) == NO_ERROR
    assert wait_until(lambda: admin.partition_counts().get(topic) == 3), admin.partition_counts()
    assert admin.delete(topic) == NO_ERROR
    assert wait_until(lambda: topic not in admin.partition_counts()), admin.partition_counts()


def test_admin_validate_only_creates_nothing(admin: Admin) -> None:
    topic = unique_name("admin-validate")
    assert admin.create(topic, partitions=2, validate_only=True) == NO_ERROR
    time.sleep(0.3)
    assert topic not in admin.partition_counts()


def test_admin_create_with_zero_partitions_is_invalid_partitions(admin: Admin) -> None:
    topic = unique_name("admin-zero")
    assert admin.create(topic, partitions=0) == INVALID_PARTITIONS
    assert topic not in admin.partition_counts()


def test_admin_create_with_more_replicas_than_brokers_is_invalid_replication_factor(
    admin: Admin,
) -> None:
    assert admin.create(unique_name("admin-rf"), partitions=1, replication=3) == (
        INVALID_REPLICATION_FACTOR
    )


def test_admin_create_existing_topic_is_topic_already_exists(admin: Admin) -> None:
    topic = unique_name("admin-dup")
    assert admin.create(topic, partitions=1) == NO_ERROR
    assert admin.create(topic, partitions=1) == TOPIC_ALREADY_EXISTS


def test_admin_delete_unknown_topic_is_unknown_topic_or_partition(admin: Admin) -> None:
    assert admin.delete(unique_name("admin-missing")) == UNKNOWN_TOPIC_OR_PARTITION


def test_describe_configs_of_topic_shows_overrides_and_defaults(admin: Admin) -> None:
    topic = unique_name("admin-configs")
    overrides = {"retention.ms": "123456789", "cleanup.policy": "compact"}
    assert admin.create(topic, partitions=1, configs=overrides) == NO_ERROR
    configs = admin.topic_configs(topic)
    assert {key: configs.get(key) for key in overrides} == overrides
    assert {"segment.bytes", "retention.bytes", "max.message.bytes"} <= configs.keys()


def test_describe_configs_of_broker_shows_its_settings(admin: Admin) -> None:
    configs = admin.broker_configs()
    assert configs.get("num.partitions") == "1", configs
    assert configs.get("auto.create.topics.enable") == "true", configs
    assert "log.segment.bytes" in configs, sorted(configs)


@pytest.mark.parametrize("codec", ["none", "gzip"])
@pytest.mark.parametrize("consumer", CLIENTS, ids=str)
def test_log_append_time_topic_stamps_records_with_broker_time(
    broker: Broker, consumer: Client, codec: str
) -> None:
    topic = unique_name(f"log-append-time-{codec}")
    admin = ConfluentAdmin(broker.bootstrap)
    config = {"message.timestamp.type": "LogAppendTime"}
    assert admin.create(topic, partitions=1, configs=config) == NO_ERROR
    assert wait_until(lambda: topic in admin.partition_counts())
    before = int(time.time() * 1000)
    records = [OutRecord(b"k", f"v{i}".encode(), timestamp_ms=1_500_000_000_000) for i in range(5)]
    KafkaPythonClient().produce(broker.bootstrap, topic, 0, records, codec)
    after = int(time.time() * 1000)

    consumed = consumer.consume(broker.bootstrap, topic, 0, BEGINNING, len(records))
    assert [r.value for r in consumed] == [r.value for r in records]
    assert {r.timestamp_type for r in consumed} == {LOG_APPEND_TIME}
    assert all(
        before - CLOCK_SLACK_MS <= r.timestamp_ms <= after + CLOCK_SLACK_MS for r in consumed
    )
