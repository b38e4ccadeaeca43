"""The hand-encoded FetchResponse decodes with kio exactly as intended."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.serial import entity_reader

from odradek.broker.protocol.fetch_response import (
    NODE_ENDPOINTS_FROM,
    TOPIC_IDS_FROM,
    FetchedPartition,
    FetchedTopic,
    encode_fetch_response,
)
from odradek.broker.protocol.leader_hints import CurrentLeader, NodeEndpoint

partitions = st.builds(
    FetchedPartition,
    partition_index=st.integers(0, 1000),
    error_code=st.sampled_from([0, 1, 3, 6]),
    high_watermark=st.integers(-1, 2**40),
    last_stable_offset=st.integers(-1, 2**40),
    log_start_offset=st.integers(-1, 2**40),
    records=st.lists(st.binary(min_size=1, max_size=50), max_size=3).map(tuple),
    current_leader=st.none() | st.builds(
        CurrentLeader, leader_id=st.integers(-1, 9), leader_epoch=st.integers(-1, 2**31 - 1)
    ),
).map(
    lambda p: FetchedPartition(
        p.partition_index, p.error_code, p.high_watermark, p.last_stable_offset,
        p.log_start_offset, p.records, sum(len(r) for r in p.records),
        current_leader=p.current_leader,
    )
)  # fmt: skip
topics = st.lists(
    st.builds(
        FetchedTopic,
        name=st.text(min_size=1, max_size=20),
        partitions=st.lists(partitions),
        topic_id=st.uuids(),
    ),
    max_size=3,
)
endpoints = st.lists(
    st.builds(
        NodeEndpoint,
        node_id=st.integers(0, 9),
        host=st.text(min_size=1, max_size=20),
        port=st.integers(1, 65535),
        rack=st.none() | st.text(max_size=5),
    ),
    max_size=3,
)


@given(
    version=st.integers(4, 18),
    topics=topics,
    session_id=st.integers(0, 2**31 - 1),
    endpoints=endpoints,
)
def test_encoded_fetch_response_decodes_with_kio(
    version: int,
    topics: list[FetchedTopic[bytes]],
    session_id: int,
    endpoints: list[NodeEndpoint],
) -> None:
    chunks = encode_fetch_response(version, topics, session_id=session_id, node_endpoints=endpoints)
    body = b"".join(chunks)
    decoded, size = entity_reader(load_response_schema(1, version))(body, 0)
    assert size == len(body)
    if version >= 7:
        assert decoded.session_id == session_id
    if version >= TOPIC_IDS_FROM:
        assert [t.topic_id for t in decoded.responses] == [t.topic_id for t in topics]
    else:
        assert [t.topic for t in decoded.responses] == [t.name for t in topics]
    if version >= NODE_ENDPOINTS_FROM:
        assert [(e.node_id, e.host, e.port, e.rack) for e in decoded.node_endpoints] == [
            (e.node_id, e.host, e.port, e.rack) for e in endpoints
        ]
    for sent, got in zip(topics, decoded.responses, strict=True):
        for partition, result in zip(sent.partitions, got.partitions, strict=True):
            assert result.partition_index == partition.partition_index
            assert result.error_code.value == partition.error_code
            assert result.high_watermark == partition.high_watermark
            assert result.last_stable_offset == partition.last_stable_offset
            if version >= 5:
                assert result.log_start_offset == partition.log_start_offset
            assert (result.records or b"") == b"".join(partition.records)
            if version >= 12 and partition.current_leader is not None:
                leader = result.current_leader
                assert (leader.leader_id, leader.leader_epoch) == (
                    partition.current_leader.leader_id,
                    partition.current_leader.leader_epoch,
                )


def test_record_chunks_are_passed_through_uncopied() -> None:
    marker = object()
    partition = FetchedPartition(0, 0, 10, 10, 0, (marker,), 42)
    chunks = encode_fetch_response(12, [FetchedTopic("t", [partition])])
    assert marker in chunks
