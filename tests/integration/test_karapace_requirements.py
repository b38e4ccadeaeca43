"""What Karapace, the Python schema registry (not published on PyPI), needs from Kafka,
done against Odradek with the clients Karapace itself uses, the way it uses them.

Read from Karapace's source (schema_reader.py, messaging.py, coordinator/):

- The schemas topic (`_schemas`) is created with confluent-kafka's AdminClient: one
  partition, `cleanup.policy=compact`; "already exists" is success; then it waits until
  Metadata shows the partition. Its health check describes the topic.
- Writes go through a confluent-kafka Producer: JSON keys and values, two headers, one
  record at a time, flushed; the delivery report's offset is what the writer then waits
  for the reader to have consumed. A delete is written with an empty value.
- The reader is a confluent-kafka Consumer in a throwaway group (no commits, earliest)
  that reads the whole topic; it is ready once it has consumed up to the high watermark
  less one, read with `get_watermark_offsets` (ListOffsets earliest and latest, not
  cached). A purged topic starts at its low watermark.
- Compaction keeps the last record per key at its offset, so a replay after compaction
  rebuilds the same state.
- The primary is elected through a classic group of protocol type "sr" with aiokafka's
  low-level client: JoinGroup (KIP-394 member id round trip) with one protocol, "v0",
  whose metadata is the member's JSON identity; the leader gets every member's metadata,
  picks the primary and sends each member a JSON assignment in SyncGroup; Heartbeat's
  REBALANCE_IN_PROGRESS makes members rejoin; LeaveGroup and session expiry remove one.
  Karapace pins aiokafka 0.12, whose request versions (JoinGroup 5, SyncGroup 3,
  Heartbeat 1, LeaveGroup 1) are the ones the aiokafka here negotiates too.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiokafka.client import AIOKafkaClient, ConnectionGroup, CoordinationType
from aiokafka.protocol.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
)
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic

pytestmark = pytest.mark.slow

TIMEOUT_S = 30.0
SCHEMAS_TOPIC = "_schemas"  # Karapace's default topic_name
PROTOCOL_TYPE = "sr"  # Karapace's SCHEMA_COORDINATOR_PROTOCOL
PROTOCOL_NAME = "v0"
SESSION_TIMEOUT_MS = 6000  # Karapace's session_timeout_ms setting (10000 by default)
REBALANCE_TIMEOUT_MS = 30000
REQUEST_TIMEOUT_MS = 30000  # Karapace's DEFAULT_REQUEST_TIMEOUT_MS
HEADERS = [("X-Registry-Version", b"karapace-test"), ("X-Origin-Host", b"127.0.0.1")]

# Kafka error codes the election relies on
NONE = 0
REBALANCE_IN_PROGRESS = 27
INCONSISTENT_GROUP_PROTOCOL = 23
MEMBER_ID_REQUIRED = 79


def eventually(check: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


# -- the schemas topic ---------------------------------------------------------------------


def create_schemas_topic(admin: AdminClient, name: str, **extra_configs: str) -> None:
    """KafkaAdminClient.new_topic as Karapace calls it, then its wait for Metadata."""
    topic = NewTopic(name, 1, 1, config={"cleanup.policy": "compact", **extra_configs})
    admin.create_topics([topic], request_timeout=20)[name].result(25)

    def partition_visible() -> bool:
        try:
            metadata = admin.list_topics(topic=name, timeout=1).topics.get(name)
        except KafkaException:
            return False
        return metadata is not None and metadata.error is None and len(metadata.partitions) == 1

    eventually(partition_visible, f"{name} in Metadata with one partition")


def test_the_schemas_topic_is_created_the_way_karapace_creates_it(broker: Broker) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    create_schemas_topic(admin, SCHEMAS_TOPIC)

    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, SCHEMAS_TOPIC)])
    configs = next(iter(described.values())).result(10)
    policy = configs["cleanup.policy"]
    assert (policy.value, policy.source) == ("compact", ConfigSource.DYNAMIC_TOPIC_CONFIG.value)
    # A second registry (or a restart) creating it again is told it exists.
    again = admin.create_topics(
        [NewTopic(SCHEMAS_TOPIC, 1, 1, config={"cleanup.policy": "compact"})]
    )
    with pytest.raises(KafkaException) as exists:
        again[SCHEMAS_TOPIC].result(25)
    assert exists.value.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS
    # The health check: describe the topic.
    description = admin.describe_topics(TopicCollection([SCHEMAS_TOPIC]))[SCHEMAS_TOPIC].result(10)
    assert [p.id for p in description.partitions] == [0]
    assert not description.is_internal


# -- writer and reader ---------------------------------------------------------------------


def schema_key(subject: str, version: int) -> bytes:
    """The canonical (Confluent) key order Karapace writes."""
    key = {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}
    return json.dumps(key, separators=(",", ":")).encode()


def config_key(subject: str | None) -> bytes:
    key = {"keytype": "CONFIG", "subject": subject, "magic": 0}
    return json.dumps(key, separators=(",", ":")).encode()


def schema_value(subject: str, version: int, schema_id: int, fields: int) -> bytes:
    schema = {
        "type": "record",
        "name": "R",
        "fields": [{"name": f"f{i}", "type": "int", "default": 0} for i in range(fields)],
    }
    value = {
        "subject": subject,
        "version": version,
        "id": schema_id,
        "schema": json.dumps(schema),
        "deleted": False,
    }
    return json.dumps(value, separators=(",", ":")).encode()


class KarapaceWriter:
    """KarapaceProducer: one record at a time, flushed, its offset from the delivery report."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "client.id": "karapace-writer",
                "socket.timeout.ms": 2000,
                "metadata.max.age.ms": 60000,
                "connections.max.idle.ms": 15000,
            }
        )

    def send(self, key: bytes, value: bytes | None) -> int:
        delivered: list[Message] = []
        self.producer.produce(
            self.topic,
            key=key,
            value=value,
            headers=HEADERS,
            on_delivery=lambda error, message: delivered.append(message),
        )
        assert self.producer.flush(10) == 0
        [message] = delivered
        assert message.error() is None, message.error()
        offset = message.offset()
        assert offset is not None and offset >= 0
        return offset


@dataclass
class Read:
    offset: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes]]


@dataclass
class KarapaceReader:
    """KafkaSchemaReader's consumer and readiness: consume batches, ready once the last
    consumed offset reaches the high watermark less one."""

    bootstrap: str
    topic: str
    consumer: Consumer = field(init=False)
    offset: int = -2  # OFFSET_UNINITIALIZED
    records: list[Read] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"karapace-autogenerated-{secrets.token_hex(6)}",
                "client.id": "karapace-reader",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 50,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "metadata.max.age.ms": 60000,
            }
        )
        self.consumer.subscribe([self.topic])

    def watermarks(self) -> tuple[int, int]:
        result = self.consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=10)
        assert result is not None, "get_watermark_offsets timed out"
        low, high = result
        return int(low), int(high)

    def is_ready(self) -> bool:
        if self.offset == -2:
            self.offset = self.watermarks()[0] - 1
        return self.offset >= self.watermarks()[1] - 1

    def consume(self, batch: int = 1000) -> None:
        for message in self.consumer.consume(num_messages=batch, timeout=0.2):
            assert message.error() is None, message.error()
            offset = message.offset()
            assert offset is not None
            headers = [
                (name, value if isinstance(value, bytes) else b"")
                for name, value in message.headers() or []
            ]
            key, value = message.key(), message.value()
            assert not isinstance(key, str) and not isinstance(value, str)
            self.records.append(Read(offset, key, value, headers))
            self.offset = offset

    def replay(self) -> None:
        """Karapace's start: consume until ready."""
        deadline = time.monotonic() + TIMEOUT_S
        while not self.is_ready():
            assert time.monotonic() < deadline, f"not ready: at {self.offset}, {self.watermarks()}"
            self.consume()

    def wait_for_offset(self, offset: int) -> None:
        """OffsetWatcher.wait_for_offset: the writer waits until the reader has seen it."""
        deadline = time.monotonic() + TIMEOUT_S
        while self.offset < offset:
            assert time.monotonic() < deadline, f"offset {offset} not seen; at {self.offset}"
            self.consume(batch=1)

    def state(self) -> dict[bytes, bytes | None]:
        """The last value per key, as the reader's database would hold it."""
        return {read.key: read.value for read in self.records if read.key is not None}

    def close(self) -> None:
        self.consumer.close()


def test_schema_records_are_written_and_read_back_as_karapace_does(broker: Broker) -> None:
    topic = unique_name("schemas")
    create_schemas_topic(AdminClient({"bootstrap.servers": broker.bootstrap}), topic)
    reader = KarapaceReader(broker.bootstrap, topic)
    writer = KarapaceWriter(broker.bootstrap, topic)
    try:
        # An empty topic: (0, 0) and ready at once, before any record.
        assert reader.watermarks() == (0, 0)
        reader.replay()
        assert reader.offset == -1

        writes = [
            (config_key(None), b'{"compatibilityLevel":"BACKWARD"}'),
            (schema_key("users-value", 1), schema_value("users-value", 1, 1, 1)),
            (schema_key("users-value", 2), schema_value("users-value", 2, 2, 2)),
            (config_key("users-value"), b'{"compatibilityLevel":"FULL"}'),
            (config_key("users-value"), b""),  # Karapace deletes a subject config so
            (schema_key("users-value", 1), None),  # Confluent's hard delete: a tombstone
        ]
        offsets = []
        for key, value in writes:
            offset = writer.send(key, value)
            reader.wait_for_offset(offset)
            offsets.append(offset)

        assert offsets == list(range(len(writes)))
        assert reader.watermarks() == (0, len(writes))
        assert reader.is_ready()
        assert [(r.offset, r.key, r.value) for r in reader.records] == [
            (offset, key, value) for offset, (key, value) in zip(offsets, writes, strict=True)
        ]
        assert all(r.headers == HEADERS for r in reader.records)

        # A second instance starting now replays the same records and is then ready.
        late = KarapaceReader(broker.bootstrap, topic)
        try:
            late.replay()
            assert late.offset == len(writes) - 1
            assert late.state() == reader.state()
            assert late.state()[config_key("users-value")] == b""
            assert late.state()[schema_key("users-value", 1)] is None
        finally:
            late.close()
    finally:
        reader.close()


def test_a_purged_schemas_topic_starts_at_its_low_watermark(broker: Broker) -> None:
    topic = unique_name("schemas")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    create_schemas_topic(admin, topic)
    writer = KarapaceWriter(broker.bootstrap, topic)
    for version in (1, 2, 3):
        writer.send(schema_key("s", version), schema_value("s", version, version, version))

    deleted = admin.delete_records([TopicPartition(topic, 0, 3)])
    [(_, future)] = list(deleted.items())
    assert future.result(10).low_watermark == 3

    reader = KarapaceReader(broker.bootstrap, topic)
    try:
        assert reader.watermarks() == (3, 3)
        reader.replay()  # nothing to read: ready at the low watermark less one
        assert (reader.offset, reader.records) == (2, [])
        offset = writer.send(schema_key("s", 4), schema_value("s", 4, 4, 4))
        assert offset == 3
        reader.wait_for_offset(offset)
        assert [r.offset for r in reader.records] == [3]
    finally:
        reader.close()


def test_a_replay_after_compaction_rebuilds_the_same_state(broker_factory: BrokerFactory) -> None:
    fast = broker_factory(
        settings={"log.retention.check.interval.ms": "200", "log.cleaner.backoff.ms": "200"}
    )
    topic = unique_name("schemas")
    admin = AdminClient({"bootstrap.servers": fast.bootstrap})
    # Small segments so updates land in sealed segments the cleaner may compact.
    create_schemas_topic(
        admin, topic, **{"segment.bytes": "4096", "min.cleanable.dirty.ratio": "0.01"}
    )
    writer = KarapaceWriter(fast.bootstrap, topic)
    written: dict[bytes, tuple[int, bytes]] = {}
    for round_ in range(8):
        for subject in ("a-value", "b-value", "c-value"):
            level = json.dumps({"compatibilityLevel": f"LEVEL-{round_}", "pad": "x" * 300})
            key = config_key(subject)
            written[key] = (writer.send(key, level.encode()), level.encode())
    # Filler with distinct keys after the updates, so the updates are in sealed segments.
    for version in range(1, 31):
        key = schema_key("filler-value", version)
        value = schema_value("filler-value", version, version, 20)
        written[key] = (writer.send(key, value), value)
    total = max(offset for offset, _ in written.values()) + 1

    def compacted() -> bool:
        reader = KarapaceReader(fast.bootstrap, topic)
        try:
            reader.replay()
            return len(reader.records) < total
        finally:
            reader.close()

    eventually(compacted, "the cleaner compacted the schemas topic")

    reader = KarapaceReader(fast.bootstrap, topic)
    try:
        reader.replay()
        assert reader.offset == total - 1  # the last record stays: ready at the end
        by_key = {r.key: (r.offset, r.value) for r in reader.records}
        assert by_key == written
    finally:
        reader.close()


# -- primary election ----------------------------------------------------------------------


@dataclass
class Joined:
    generation: int
    leader_id: str
    protocol: str
    members: dict[str, bytes]  # only the leader gets them


class RegistryMember:
    """One Karapace instance's SchemaCoordinator, on aiokafka's low-level client."""

    def __init__(self, bootstrap: str, group: str, port: int, eligible: bool = True) -> None:
        self.group = group
        self.identity = {
            "version": 2,
            "karapace_version": "test",
            "host": "127.0.0.1",
            "port": port,
            "scheme": "http",
            "master_eligibility": eligible,
        }
        self.url = f"http://127.0.0.1:{port}"
        self.metadata = json.dumps(self.identity, separators=(",", ":")).encode()
        self.client = AIOKafkaClient(
            bootstrap_servers=bootstrap,
            client_id=f"karapace-{port}",
            request_timeout_ms=REQUEST_TIMEOUT_MS,
        )
        self.member_id = ""
        self.generation = -1
        self.coordinator: int | None = None

    async def start(self) -> None:
        await self.client.bootstrap()
        coordinator = await self.client.coordinator_lookup(CoordinationType.GROUP, self.group)
        assert await self.client.ready(coordinator, group=ConnectionGroup.COORDINATION)
        self.coordinator = coordinator

    async def send(self, request: Any) -> Any:
        assert self.coordinator is not None
        return await self.client.send(self.coordinator, request, group=ConnectionGroup.COORDINATION)

    async def join(self, protocol_type: str = PROTOCOL_TYPE) -> Joined:
        while True:
            response = await self.send(
                JoinGroupRequest(
                    self.group,
                    SESSION_TIMEOUT_MS,
                    REBALANCE_TIMEOUT_MS,
                    self.member_id,
                    None,
                    protocol_type,
                    [(PROTOCOL_NAME, self.metadata)],
                )
            )
            if response.error_code == MEMBER_ID_REQUIRED and not self.member_id:
                self.member_id = response.member_id
                continue
            assert response.error_code == NONE, f"JoinGroup: error {response.error_code}"
            self.member_id = response.member_id
            self.generation = response.generation_id
            members = {m[0]: m[-1] for m in response.members}
            return Joined(
                response.generation_id, response.leader_id, response.group_protocol, members
            )

    async def sync(self, joined: Joined) -> dict[str, Any]:
        """SyncGroup; the leader elects as SchemaCoordinator.perform_assignment does."""
        assignments: list[tuple[str, bytes]] = []
        if joined.leader_id == self.member_id:
            assignments = elect(joined.members)
        response = await self.send(
            SyncGroupRequest(self.group, self.generation, self.member_id, None, assignments)
        )
        assert response.error_code == NONE, f"SyncGroup: error {response.error_code}"
        assignment: dict[str, Any] = json.loads(response.member_assignment)
        return assignment

    async def heartbeat(self) -> int:
        response = await self.send(HeartbeatRequest(self.group, self.generation, self.member_id))
        code: int = response.error_code
        return code

    async def leave(self) -> None:
        response = await self.send(LeaveGroupRequest(self.group, self.member_id))
        assert response.error_code == NONE

    async def close(self) -> None:
        await self.client.close()


def elect(members: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """The lowest URL among the eligible members is the primary ("lowest" strategy)."""
    identities = {member_id: json.loads(metadata) for member_id, metadata in members.items()}
    eligible = {
        f"{i['scheme']}://{i['host']}:{i['port']}": member_id
        for member_id, i in identities.items()
        if i["master_eligibility"]
    }
    primary = eligible[min(eligible)]
    assignment = {"master": primary, "master_identity": identities[primary], "error": 0}
    encoded = json.dumps(assignment).encode()
    return [(member_id, encoded) for member_id in members]


async def rebalance(*members: RegistryMember) -> list[dict[str, Any]]:
    """Everyone (re)joins, then syncs: the assignment each member got."""
    joined = await asyncio.gather(*(m.join() for m in members))
    return list(await asyncio.gather(*(m.sync(j) for m, j in zip(members, joined, strict=True))))


async def wait_for_rebalance(member: RegistryMember, timeout: float = TIMEOUT_S) -> None:
    """Heartbeat (Karapace's interval is 3 s; faster here) until told to rejoin."""
    deadline = time.monotonic() + timeout
    while (code := await member.heartbeat()) == NONE:
        assert time.monotonic() < deadline, "no rebalance was signalled"
        await asyncio.sleep(0.3)
    assert code == REBALANCE_IN_PROGRESS, f"Heartbeat: error {code}"


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=120))


def test_primary_election_through_a_group_of_karapace_protocol_type(broker: Broker) -> None:
    group = unique_name("schema-registry")

    async def scenario() -> None:
        first = RegistryMember(broker.bootstrap, group, port=8082)
        second = RegistryMember(broker.bootstrap, group, port=8081)
        observer = RegistryMember(broker.bootstrap, group, port=8083, eligible=False)
        try:
            for member in (first, second, observer):
                await member.start()

            # Alone, the first instance is the leader and elects itself.
            joined = await first.join()
            assert (joined.leader_id, joined.protocol) == (first.member_id, PROTOCOL_NAME)
            assert joined.members == {first.member_id: first.metadata}
            assignment = await first.sync(joined)
            assert assignment["master"] == first.member_id
            assert assignment["master_identity"] == first.identity
            assert await first.heartbeat() == NONE

            # A second instance joins: its JoinGroup waits until the first rejoins too.
            second_join = asyncio.create_task(second.join())
            await wait_for_rebalance(first)
            first_joined, second_joined = await asyncio.gather(first.join(), second_join)
            assert first_joined.generation == second_joined.generation > joined.generation
            leader, follower = (
                (first_joined, second_joined)
                if first_joined.leader_id == first.member_id
                else (second_joined, first_joined)
            )
            # The leader sees every member's metadata byte for byte; the follower none.
            assert leader.members == {
                first.member_id: first.metadata,
                second.member_id: second.metadata,
            }
            assert follower.members == {}
            assignments = await asyncio.gather(first.sync(first_joined), second.sync(second_joined))
            # Both agree: the lowest URL, the second instance, is the primary.
            assert [a["master"] for a in assignments] == [second.member_id] * 2
            assert assignments[0]["master_identity"] == second.identity

            # A member that may not be primary joins; the primary stays.
            observer_join = asyncio.create_task(observer.join())
            await asyncio.gather(wait_for_rebalance(first), wait_for_rebalance(second))
            joined_all = await asyncio.gather(first.join(), second.join(), observer_join)
            three = await asyncio.gather(
                *(m.sync(j) for m, j in zip((first, second, observer), joined_all, strict=True))
            )
            assert [a["master"] for a in three] == [second.member_id] * 3

            # The primary leaves: the others are told to rejoin and elect the first.
            await second.leave()
            await asyncio.gather(wait_for_rebalance(first), wait_for_rebalance(observer))
            after = await rebalance(first, observer)
            assert [a["master"] for a in after] == [first.member_id] * 2
            assert after[1]["master_identity"]["port"] == 8082
        finally:
            for member in (first, second, observer):
                await member.close()

    run(scenario())


def test_a_primary_that_stops_heartbeating_is_replaced_after_its_session(
    broker: Broker,
) -> None:
    group = unique_name("schema-registry")

    async def scenario() -> None:
        primary = RegistryMember(broker.bootstrap, group, port=8081)
        standby = RegistryMember(broker.bootstrap, group, port=8082)
        try:
            await primary.start()
            await standby.start()
            await primary.sync(await primary.join())
            standby_join = asyncio.create_task(standby.join())
            await wait_for_rebalance(primary)
            joined = await asyncio.gather(primary.join(), standby_join)
            first = await asyncio.gather(primary.sync(joined[0]), standby.sync(joined[1]))
            assert [a["master"] for a in first] == [primary.member_id] * 2

            # The primary hangs (no heartbeat, no LeaveGroup): after its session timeout
            # the coordinator drops it and the standby is elected.
            started = time.monotonic()
            await wait_for_rebalance(standby, timeout=SESSION_TIMEOUT_MS / 1000 + 15)
            waited = time.monotonic() - started
            assert waited > SESSION_TIMEOUT_MS / 1000 / 2, f"rebalanced after {waited:.1f} s"
            [assignment] = await rebalance(standby)
            assert assignment["master"] == standby.member_id
            assert await standby.heartbeat() == NONE
        finally:
            await primary.close()
            await standby.close()

    run(scenario())


def test_a_consumer_cannot_join_the_registry_group(broker: Broker) -> None:
    """Karapace treats INCONSISTENT_GROUP_PROTOCOL as fatal: a Kafka consumer given the
    registry's group id by mistake must be refused, not join and take the election."""
    group = unique_name("schema-registry")

    async def scenario() -> None:
        registry = RegistryMember(broker.bootstrap, group, port=8081)
        intruder = RegistryMember(broker.bootstrap, group, port=9999)
        try:
            await registry.start()
            await intruder.start()
            await registry.sync(await registry.join())
            with pytest.raises(AssertionError, match=f"error {INCONSISTENT_GROUP_PROTOCOL}"):
                await intruder.join(protocol_type="consumer")
            assert await registry.heartbeat() == NONE
        finally:
            await registry.close()
            await intruder.close()

    run(scenario())
