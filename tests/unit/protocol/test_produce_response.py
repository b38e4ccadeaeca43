"""The hand-encoded ProduceResponse decodes with kio exactly as intended."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.produce_response import ProducedPartition, encode_produce_response

partitions = st.builds(
    ProducedPartition,
    index=st.integers(0, 1000),
    error_code=st.sampled_from([0, 3, 6, 19]),
    base_offset=st.integers(-1, 2**40),
    log_append_time=st.integers(-1, 2**41),
    log_start_offset=st.integers(-1, 2**40),
    error_message=st.none() | st.text(max_size=30),
)
topics = st.lists(
    st.tuples(st.text(min_size=1, max_size=20), st.lists(partitions, max_size=4)), max_size=3
)


@given(version=st.integers(3, 9), topics=topics, throttle=st.integers(0, 2**31 - 1))
def test_encoded_produce_response_is_what_kio_writes(
    version: int, topics: list[tuple[str, list[ProducedPartition]]], throttle: int
) -> None:
    schema = load_response_schema(0, version)
    expected = io.BytesIO()
    entity_writer(schema)(expected, build_entity(schema, _as_mapping(topics, throttle)))
    body = encode_produce_response(version, topics, throttle)
    assert body == expected.getvalue()
    _, size = entity_reader(schema)(body, 0)
    assert size == len(body)


def _as_mapping(topics: list[tuple[str, list[ProducedPartition]]], throttle: int) -> dict[str, Any]:
    return {
        "responses": [
            {
                "name": name,
                "partition_responses": [
                    {
                        "index": p.index,
                        "error_code": p.error_code,
                        "base_offset": p.base_offset,
                        "log_append_time": p.log_append_time,
                        "log_start_offset": p.log_start_offset,
                        "record_errors": (),
                        "error_message": p.error_message,
                    }
                    for p in partitions
                ],
            }
            for name, partitions in topics
        ],
        "throttle_time": throttle,
    }
