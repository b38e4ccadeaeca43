"""One version-independent description builds every version of a response."""

from __future__ import annotations

import io
import uuid

import pytest
from kio.index import load_response_schema
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.entity_builder import build_entity

TOPIC_ID = uuid.uuid4()
METADATA = {
    "throttle_time": 5,
    "brokers": [{"node_id": 1, "host": "127.0.0.1", "port": 9092, "rack": "a"}],
    "cluster_id": "c1",
    "controller_id": 1,
    "topics": [
        {
            "error_code": 0,
            "name": "orders",
            "topic_id": TOPIC_ID,
            "is_internal": False,
            "partitions": [
                {
                    "error_code": ErrorCode.none,
                    "partition_index": 0,
                    "leader_id": 1,
                    "leader_epoch": 3,
                    "replica_nodes": (1,),
                    "isr_nodes": (1,),
                    "offline_replicas": (),
                }
            ],
            "topic_authorized_operations": -2147483648,
        }
    ],
    "cluster_authorized_operations": -2147483648,
}


@pytest.mark.parametrize("version", range(13))
def test_metadata_response_builds_and_round_trips_in_every_version(version: int) -> None:
    schema = load_response_schema(3, version)
    entity = build_entity(schema, METADATA)
    buffer = io.BytesIO()
    entity_writer(schema)(buffer, entity)
    decoded, _ = entity_reader(schema)(buffer.getvalue(), 0)
    assert decoded.brokers[0].port == 9092
    assert decoded.topics[0].name == "orders"
    assert decoded.topics[0].partitions[0].leader_id == 1
    if version >= 7:
        assert decoded.topics[0].partitions[0].leader_epoch == 3
    if version >= 10:
        assert decoded.topics[0].topic_id == TOPIC_ID
    if version >= 3:
        assert decoded.throttle_time.total_seconds() == 0.005


def test_produce_log_append_time_of_minus_one_means_none() -> None:
    schema = load_response_schema(0, 9)
    partition = {"index": 0, "error_code": 0, "base_offset": 7, "log_append_time": -1,
                 "log_start_offset": 0, "record_errors": (), "error_message": None}  # fmt: skip
    response = {"responses": [{"name": "t", "partition_responses": [partition]}],
                "throttle_time": 0}  # fmt: skip
    entity = build_entity(schema, response)
    assert entity.responses[0].partition_responses[0].log_append_time is None
    assert entity.responses[0].partition_responses[0].base_offset == 7


def test_a_key_no_version_of_the_entity_has_fails_under_the_test_suites_strict_mode() -> None:
    schema = load_response_schema(3, 12)  # Metadata v12
    with pytest.raises(KeyError, match="has no field \\['no_such_field'\\]"):
        build_entity(schema, {**METADATA, "no_such_field": 1})
    # a field only other versions have is dropped, not refused
    assert build_entity(load_response_schema(3, 0), METADATA).brokers[0].host == "127.0.0.1"
