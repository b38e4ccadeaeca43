"""Topics named by id (KIP-516): Produce v13 and Fetch v13+ as Kafka 4.x clients send them,
and the leader hints of KIP-951 in answers that name the wrong broker."""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from broker_process import Broker, unique_name
from cluster_harness import ClusterFactory
from kafka_wire import (
    API_FETCH,
    API_PRODUCE,
    WireClient,
    build_batch,
    load_request_schema,
    nested,
    parse_batches,
)
from kio.static.primitive import i16, i32, i32Timedelta, i64

UNKNOWN_TOPIC_ID = 100
NOT_LEADER_OR_FOLLOWER = 6


def produce_by_id(wire: WireClient, version: int, topic_id: uuid.UUID, records: bytes) -> Any:
    schema = load_request_schema(API_PRODUCE, version)
    data = nested(schema, "PartitionProduceData")(index=i32(0), records=records)
    body = schema(
        transactional_id=None,
        acks=i16(-1),
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
        topic_data=(nested(schema, "TopicProduceData")(topic_id=topic_id, partition_data=(data,)),),
    )
    return wire.call(API_PRODUCE, version, body)


def fetch_by_id(wire: WireClient, version: int, topic_id: uuid.UUID, offset: int = 0) -> Any:
    schema = load_request_schema(API_FETCH, version)
    partition = nested(schema, "FetchPartition")(
        partition=i32(0), fetch_offset=i64(offset), partition_max_bytes=i32(1 << 20)
    )
    body = schema(
        max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=i32(0),
        topics=(nested(schema, "FetchTopic")(topic_id=topic_id, partitions=(partition,)),),
        forgotten_topics_data=(),
    )
    return wire.call(API_FETCH, version, body)


def topic_id_of(wire: WireClient, topic: str) -> uuid.UUID:
    found = wire.wait_for_topic(topic)
    return uuid.UUID(str(found.topic_id))


def test_produce_and_fetch_name_the_topic_by_id(broker: Broker) -> None:
    topic = unique_name("by-id")
    with WireClient.to(broker.bootstrap) as wire:
        topic_id = topic_id_of(wire, topic)
        produced = produce_by_id(wire, 13, topic_id, bytes(build_batch([b"one", b"two"])))
        answer = produced.responses[0]
        assert answer.topic_id == topic_id
        assert answer.partition_responses[0].error_code.value == 0
        for version in (13, 15, 16, 17, 18):
            fetched = fetch_by_id(wire, version, topic_id).responses[0]
            assert fetched.topic_id == topic_id
            partition = fetched.partitions[0]
            assert partition.error_code.value == 0
            assert partition.high_watermark == 2
            batches, _ = parse_batches(partition.records)
            assert [(b.base_offset, b.records_count) for b in batches] == [(0, 2)]


def test_an_unknown_topic_id_is_unknown_topic_id(broker: Broker) -> None:
    stranger = uuid.uuid4()
    with WireClient.to(broker.bootstrap) as wire:
        produced = produce_by_id(wire, 13, stranger, bytes(build_batch([b"lost"])))
        assert produced.responses[0].topic_id == stranger
        assert produced.responses[0].partition_responses[0].error_code.value == UNKNOWN_TOPIC_ID
        fetched = fetch_by_id(wire, 17, stranger).responses[0]
        assert fetched.topic_id == stranger
        assert fetched.partitions[0].error_code.value == UNKNOWN_TOPIC_ID


def test_a_follower_answers_with_where_the_leader_is(cluster_factory: ClusterFactory) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(partitions=1)
    leader = cluster.leader_of(topic, 0)
    follower = next(node for node in cluster.brokers if node != leader)
    leader_address = cluster.brokers[leader].bootstrap
    with WireClient.to(cluster.brokers[follower].bootstrap) as wire:
        metadata = wire.wait_for_topic(topic, auto_create=False)
        topic_id = uuid.UUID(str(metadata.topic_id))
        epoch = metadata.partitions[0].leader_epoch
        produced = produce_by_id(wire, 13, topic_id, bytes(build_batch([b"misdirected"])))
        fetched = fetch_by_id(wire, 16, topic_id)
    for answer, partition in (
        (produced, produced.responses[0].partition_responses[0]),
        (fetched, fetched.responses[0].partitions[0]),
    ):
        assert partition.error_code.value == NOT_LEADER_OR_FOLLOWER
        hint = partition.current_leader
        assert (hint.leader_id, hint.leader_epoch) == (leader, epoch)
        endpoints = [(e.node_id, f"{e.host}:{e.port}") for e in answer.node_endpoints]
        assert endpoints == [(leader, leader_address)]
