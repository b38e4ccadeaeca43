"""The group APIs at the versions Kafka 4.x clients send: offsets committed and fetched by
topic id (OffsetCommit/OffsetFetch v10), several groups in one OffsetFetch (v8+), an
unknown group described with GROUP_ID_NOT_FOUND (DescribeGroups v6), and several
coordinators found at once (FindCoordinator v4+)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from broker_process import Broker, unique_name
from kafka_wire import WireClient, load_request_schema, nested
from kio.static.primitive import i32, i64

API_OFFSET_COMMIT = 8
API_OFFSET_FETCH = 9
API_DESCRIBE_GROUPS = 15
API_FIND_COORDINATOR = 10
UNKNOWN_TOPIC_ID = 100
GROUP_ID_NOT_FOUND = 69
STANDALONE = -1  # generation of a consumer that commits outside any rebalance


def wait_for_coordinator(wire: WireClient, group: str) -> None:
    """FindCoordinator until the group's coordinator (this broker) has loaded its partition."""
    schema = load_request_schema(API_FIND_COORDINATOR, 3)
    body = schema(key=group, key_type=0)
    deadline = time.monotonic() + 30
    while wire.call(API_FIND_COORDINATOR, 3, body).error_code.value != 0:
        assert time.monotonic() < deadline, f"no coordinator for {group}"
        time.sleep(0.1)


def commit_by_id(wire: WireClient, group: str, topic_id: uuid.UUID, offset: int) -> Any:
    schema = load_request_schema(API_OFFSET_COMMIT, 10)
    partition = nested(schema, "OffsetCommitRequestPartition")(
        partition_index=i32(0), committed_offset=i64(offset), committed_metadata="m"
    )
    topic = nested(schema, "OffsetCommitRequestTopic")(topic_id=topic_id, partitions=(partition,))
    body = schema(
        group_id=group,
        generation_id_or_member_epoch=i32(STANDALONE),
        member_id="",
        topics=(topic,),
    )
    return wire.call(API_OFFSET_COMMIT, 10, body)


def fetch_groups(wire: WireClient, version: int, groups: dict[str, uuid.UUID | str]) -> Any:
    """OffsetFetch for partition 0 of one topic per group (by id from v10, else by name)."""
    schema = load_request_schema(API_OFFSET_FETCH, version)
    topic_schema = nested(schema, "OffsetFetchRequestTopics")
    group_schema = nested(schema, "OffsetFetchRequestGroup")
    by = "topic_id" if version >= 10 else "name"
    entries = tuple(
        group_schema(
            group_id=group, topics=(topic_schema(**{by: topic}, partition_indexes=(i32(0),)),)
        )
        for group, topic in groups.items()
    )
    return wire.call(API_OFFSET_FETCH, version, schema(groups=entries))


def test_offsets_are_committed_and_fetched_by_topic_id(broker: Broker) -> None:
    topic, group = unique_name("offsets-by-id"), unique_name("by-id")
    with WireClient.to(broker.bootstrap) as wire:
        wait_for_coordinator(wire, group)
        topic_id = uuid.UUID(str(wire.wait_for_topic(topic).topic_id))
        [committed] = commit_by_id(wire, group, topic_id, 42).topics
        assert committed.topic_id == topic_id
        assert [p.error_code.value for p in committed.partitions] == [0]
        stranger = uuid.uuid4()
        [refused] = commit_by_id(wire, group, stranger, 1).topics
        assert (refused.topic_id, refused.partitions[0].error_code.value) == (
            stranger,
            UNKNOWN_TOPIC_ID,
        )

        [answer] = fetch_groups(wire, 10, {group: topic_id}).groups
        assert answer.group_id == group and answer.error_code.value == 0
        [fetched] = answer.topics
        assert fetched.topic_id == topic_id
        partition = fetched.partitions[0]
        assert (partition.committed_offset, partition.metadata) == (42, "m")


def test_one_offset_fetch_answers_for_several_groups(broker: Broker) -> None:
    topic = unique_name("offsets-batched")
    groups = [unique_name("batched"), unique_name("batched")]
    with WireClient.to(broker.bootstrap) as wire:
        topic_id = uuid.UUID(str(wire.wait_for_topic(topic).topic_id))
        for offset, group in enumerate(groups, start=5):
            wait_for_coordinator(wire, group)
            commit_by_id(wire, group, topic_id, offset)
        answer = fetch_groups(wire, 8, dict.fromkeys(groups, topic)).groups
    offsets = {g.group_id: g.topics[0].partitions[0].committed_offset for g in answer}
    assert offsets == {groups[0]: 5, groups[1]: 6}


def test_describing_an_unknown_group_is_group_id_not_found_from_v6(broker: Broker) -> None:
    group = unique_name("nobody")
    with WireClient.to(broker.bootstrap) as wire:
        wait_for_coordinator(wire, group)
        for version, code in ((5, 0), (6, GROUP_ID_NOT_FOUND)):
            schema = load_request_schema(API_DESCRIBE_GROUPS, version)
            body = schema(groups=(group,), include_authorized_operations=False)
            [described] = wire.call(API_DESCRIBE_GROUPS, version, body).groups
            assert (described.error_code.value, described.group_state) == (code, "Dead")
    assert described.error_message == f"Group {group} not found."


def test_find_coordinator_answers_several_keys_at_once_from_v4(broker: Broker) -> None:
    groups = [unique_name("batched"), unique_name("batched")]
    with WireClient.to(broker.bootstrap) as wire:
        for group in groups:
            wait_for_coordinator(wire, group)
        for version in (4, 5):
            schema = load_request_schema(API_FIND_COORDINATOR, version)
            answer = wire.call(
                API_FIND_COORDINATOR, version, schema(key_type=0, coordinator_keys=tuple(groups))
            )
            found = {c.key: (c.error_code.value, c.node_id, c.port) for c in answer.coordinators}
            assert found == {group: (0, 0, broker.port) for group in groups}
            unknown = schema(key_type=7, coordinator_keys=("x",))
            [refused] = wire.call(API_FIND_COORDINATOR, version, unknown).coordinators
            assert (refused.key, refused.error_code.value, refused.node_id) == ("x", 42, -1)
            assert refused.error_message == "unknown coordinator key type 7"
