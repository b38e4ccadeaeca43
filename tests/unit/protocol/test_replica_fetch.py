"""The follower's hand-encoded Fetch is kio's to the byte, and its decoder reads kio's
answers (tagged fields included) as kio does."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_writer

from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.replica_fetch import (
    FETCH_VERSION,
    FetchPosition,
    ReplicaFetchRequest,
    decode_fetch_response,
    encode_fetch_request,
)

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
names = st.text(min_size=1, max_size=12)
positions = st.builds(
    FetchPosition,
    partition=int32,
    current_leader_epoch=int32,
    fetch_offset=int64,
    log_start_offset=int64,
    partition_max_bytes=int32,
    last_fetched_epoch=int32,
)
requests = st.builds(
    ReplicaFetchRequest,
    replica_id=int32,
    max_wait_ms=st.integers(0, 2**31 - 1),
    min_bytes=int32,
    max_bytes=int32,
    session_id=int32,
    session_epoch=int32,
    topics=st.dictionaries(names, st.lists(positions, max_size=3), max_size=3),
    forgotten=st.dictionaries(names, st.lists(int32, max_size=3), max_size=3),
)


def _kio_bytes(schema: Any, body: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    entity_writer(schema)(out, build_entity(schema, body))
    return out.getvalue()


@given(requests)
def test_the_request_is_kios_to_the_byte(request: ReplicaFetchRequest) -> None:
    body = {
        "replica_id": request.replica_id,
        "max_wait": request.max_wait_ms,
        "min_bytes": request.min_bytes,
        "max_bytes": request.max_bytes,
        "isolation_level": 0,
        "session_id": request.session_id,
        "session_epoch": request.session_epoch,
        "topics": [
            {"topic": topic, "partitions": [vars(p) for p in partitions]}
            for topic, partitions in request.topics.items()
        ],
        "forgotten_topics_data": [
            {"topic": topic, "partitions": partitions}
            for topic, partitions in request.forgotten.items()
        ],
        "rack_id": "",
    }
    assert encode_fetch_request(request) == _kio_bytes(load_request_schema(1, FETCH_VERSION), body)


answers = st.fixed_dictionaries(
    {
        "partition_index": int32,
        "error_code": st.sampled_from([0, 1, 6, 74]),
        "high_watermark": int64,
        "last_stable_offset": int64,
        "log_start_offset": int64,
        "aborted_transactions": st.none()
        | st.lists(st.fixed_dictionaries({"producer_id": int64, "first_offset": int64})),
        "preferred_read_replica": int32,
        "records": st.none() | st.binary(max_size=40),
    },
    optional={
        "diverging_epoch": st.fixed_dictionaries({"epoch": int32, "end_offset": int64}),
        "current_leader": st.fixed_dictionaries({"leader_id": int32, "leader_epoch": int32}),
        "snapshot_id": st.fixed_dictionaries({"end_offset": int64, "epoch": int32}),
    },
)


@given(
    error_code=st.sampled_from([0, 70]),
    session_id=int32,
    topics=st.lists(
        st.fixed_dictionaries({"topic": names, "partitions": st.lists(answers, max_size=3)}),
        max_size=3,
    ),
)
def test_an_answer_reads_as_kio_wrote_it(
    error_code: int, session_id: int, topics: list[dict[str, Any]]
) -> None:
    schema = load_response_schema(1, FETCH_VERSION)
    body = {"throttle_time": 0, "error_code": error_code, "session_id": session_id}
    frame = b"header" + _kio_bytes(schema, {**body, "responses": topics})

    decoded = decode_fetch_response(frame, len(b"header"))

    assert (decoded.error_code, decoded.session_id) == (error_code, session_id)
    assert [t.topic for t in decoded.responses] == [t["topic"] for t in topics]
    for topic, wrote in zip(decoded.responses, topics, strict=True):
        read = [
            (p.partition_index, p.error_code, p.high_watermark, p.log_start_offset, p.records)
            for p in topic.partitions
        ]
        assert read == [
            (
                p["partition_index"],
                p["error_code"],
                p["high_watermark"],
                p["log_start_offset"],
                p["records"],
            )
            for p in wrote["partitions"]
        ]


def test_a_truncated_answer_is_refused() -> None:
    schema = load_response_schema(1, FETCH_VERSION)
    partition = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": 5,
        "aborted_transactions": None,
        "records": b"x" * 9,
    }
    topics = [{"topic": "t", "partitions": [partition]}]
    body = _kio_bytes(schema, {"throttle_time": 0, "error_code": 0, "responses": topics})
    decode_fetch_response(body, 0)
    for cut in (1, 3, 8, len(body) - 4):
        with pytest.raises(ValueError):
            decode_fetch_response(body[:-cut], 0)
    with pytest.raises(ValueError):
        decode_fetch_response(body + b"\0", 0)
