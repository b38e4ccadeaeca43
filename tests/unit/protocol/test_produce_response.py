"""The hand-encoded ProduceResponse is byte for byte what kio writes, and decodes with kio."""

from __future__ import annotations

import io
import uuid
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.leader_hints import CurrentLeader, NodeEndpoint
from odradek.broker.protocol.produce_response import (
    LEADER_HINTS_FROM,
    TOPIC_IDS_FROM,
    ProducedPartition,
    ProducedTopic,
    encode_produce_response,
)

leaders = st.none() | st.builds(
    CurrentLeader, leader_id=st.integers(-1, 100), leader_epoch=st.integers(-1, 2**31 - 1)
)
partitions = st.builds(
    ProducedPartition,
    index=st.integers(0, 1000),
    error_code=st.sampled_from([0, 3, 6, 19]),
    base_offset=st.integers(-1, 2**40),
    log_append_time=st.integers(-1, 2**41),
    log_start_offset=st.integers(-1, 2**40),
    error_message=st.none() | st.text(max_size=30),
    current_leader=leaders,
)
topics = st.lists(
    st.builds(
        ProducedTopic,
        name=st.text(min_size=1, max_size=20),
        partitions=st.lists(partitions, max_size=4),
        topic_id=st.uuids(),
    ),
    max_size=3,
)
endpoints = st.lists(
    st.builds(
        NodeEndpoint,
        node_id=st.integers(0, 100),
        host=st.text(min_size=1, max_size=20),
        port=st.integers(1, 65535),
        rack=st.none() | st.text(max_size=5),
    ),
    max_size=3,
)


@given(
    version=st.integers(3, 13),
    topics=topics,
    throttle=st.integers(0, 2**31 - 1),
    endpoints=endpoints,
)
def test_encoded_produce_response_is_what_kio_writes(
    version: int, topics: list[ProducedTopic], throttle: int, endpoints: list[NodeEndpoint]
) -> None:
    schema = load_response_schema(0, version)
    expected = io.BytesIO()
    mapping = _as_mapping(version, topics, throttle, endpoints)
    entity_writer(schema)(expected, build_entity(schema, mapping))
    body = encode_produce_response(version, topics, throttle, endpoints)
    assert body == expected.getvalue()
    decoded, size = entity_reader(schema)(body, 0)
    assert size == len(body)
    if version >= TOPIC_IDS_FROM:
        assert [t.topic_id for t in decoded.responses] == [t.topic_id for t in topics]


def _as_mapping(
    version: int, topics: list[ProducedTopic], throttle: int, endpoints: list[NodeEndpoint]
) -> dict[str, Any]:
    hints = version >= LEADER_HINTS_FROM
    return {
        "responses": [
            {
                "name": topic.name,
                "topic_id": topic.topic_id or uuid.UUID(int=0),
                "partition_responses": [
                    {
                        "index": p.index,
                        "error_code": p.error_code,
                        "base_offset": p.base_offset,
                        "log_append_time": p.log_append_time,
                        "log_start_offset": p.log_start_offset,
                        "record_errors": (),
                        "error_message": p.error_message,
                        **(
                            {"current_leader": _leader(p.current_leader)}
                            if hints and p.current_leader
                            else {}
                        ),
                    }
                    for p in topic.partitions
                ],
            }
            for topic in topics
        ],
        "throttle_time": throttle,
        "node_endpoints": [_endpoint(e) for e in endpoints] if hints else (),
    }


def _leader(leader: CurrentLeader) -> dict[str, int]:
    return {"leader_id": leader.leader_id, "leader_epoch": leader.leader_epoch}


def _endpoint(endpoint: NodeEndpoint) -> dict[str, Any]:
    return {
        "node_id": endpoint.node_id,
        "host": endpoint.host,
        "port": endpoint.port,
        "rack": endpoint.rack,
    }
