"""The hand-encoded MetadataResponse is what kio writes for the same answer, in every version."""

from __future__ import annotations

import io
import uuid
from typing import Any

import pytest
from kio.serial import entity_writer

from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.framing import response_schema
from odradek.broker.protocol.metadata_response import (
    MetadataBroker,
    MetadataPartition,
    MetadataTopic,
    encode_metadata_response,
    encode_partitions,
)

BROKERS = (
    MetadataBroker(1, "broker-1.example", 9092, "rack-a"),
    MetadataBroker(2, "b2", 19092, None),
)
PARTITIONS = (
    MetadataPartition(0, 0, 1, 7, (1, 2), (1, 2), ()),
    MetadataPartition(5, 1, -1, 3, (2, 1), (1,), (2,)),  # leader not available, one offline
)
TOPIC_ID = uuid.UUID("6b9a4a9e-2f7e-4c1e-9d3a-0c9e4f0e5a11")


def kio_bytes(version: int, body: dict[str, Any]) -> bytes:
    schema = response_schema(3, version)
    buffer = io.BytesIO()
    entity_writer(schema)(buffer, build_entity(schema, body))
    return buffer.getvalue()


def partition_dict(partition: MetadataPartition) -> dict[str, Any]:
    return {
        "error_code": partition.error_code,
        "partition_index": partition.index,
        "leader_id": partition.leader_id,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": partition.replicas,
        "isr_nodes": partition.isr,
        "offline_replicas": partition.offline_replicas,
    }


@pytest.mark.parametrize("version", range(14))
def test_every_version_matches_kio(version: int) -> None:
    topics = [
        (0, "orders", TOPIC_ID, False, PARTITIONS, 1234),
        (0, "__consumer_offsets", None, True, PARTITIONS[:1], -(2**31)),
        (3, "missing" if version < 12 else None, None, False, (), -(2**31)),
    ]
    hand = encode_metadata_response(
        version,
        BROKERS,
        "cluster-xyz",
        2,
        [
            MetadataTopic(code, name, topic_id, internal, encode_partitions(version, parts), ops)
            for code, name, topic_id, internal, parts, ops in topics
        ],
        cluster_authorized_operations=3000,
        throttle_ms=17,
    )
    body = {
        "throttle_time": 17,
        "error_code": 0,
        "brokers": [
            {"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack} for b in BROKERS
        ],
        "cluster_id": "cluster-xyz",
        "controller_id": 2,
        "topics": [
            {
                "error_code": code,
                "name": name,
                "topic_id": topic_id or uuid.UUID(int=0),
                "is_internal": internal,
                "partitions": [partition_dict(p) for p in parts],
                "topic_authorized_operations": ops,
            }
            for code, name, topic_id, internal, parts, ops in topics
        ],
        "cluster_authorized_operations": 3000,
    }
    assert hand == kio_bytes(version, body)


@pytest.mark.parametrize("version", [0, 9, 13])
def test_an_empty_answer_matches_kio(version: int) -> None:
    hand = encode_metadata_response(version, (), None, -1, ())
    body = {"throttle_time": 0, "error_code": 0, "brokers": [], "cluster_id": None,
            "controller_id": -1, "topics": []}  # fmt: skip
    assert hand == kio_bytes(version, body)
