"""Record batches encoded here are read by a real client, and vice versa."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from odradek.broker.protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from odradek.broker.protocol.records import iter_batches

CODECS = [0, 1, 2, 3, 4]
records_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=40),
        st.none() | st.binary(max_size=200),
        st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=8)), max_size=3),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=20,
)


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=25)
@given(items=records_strategy, base_offset=st.integers(0, 2**40))
def test_encoded_batch_reads_back_with_kafka_python(
    codec: int,
    items: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int]],
    base_offset: int,
) -> None:
    records = [
        Record(base_offset + index, 1_700_000_000_000 + delay, key, value, tuple(headers))
        for index, (key, value, headers, delay) in enumerate(items)
    ]
    batch = encode_batch(BatchSpec(base_offset=base_offset, codec=codec, records=records))
    assert [header.records_count for header in iter_batches(batch)] == [len(records)]
    read = list(DefaultRecordBatch(batch))
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in read] == [
        (r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in records
    ]
    assert decode_batch(batch)[1] == records


@pytest.mark.parametrize("codec", CODECS)
def test_batches_built_by_kafka_python_decode(codec: int) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
    )  # fmt: skip
    for index in range(10):
        builder.append(index, timestamp=1000 + index, key=b"k%d" % index, value=b"v" * index,
                       headers=[("h", b"x")])  # fmt: skip
    header, records = decode_batch(bytes(builder.build()))
    assert header.records_count == 10
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == [
        (i, 1000 + i, b"k%d" % i, b"v" * i) for i in range(10)
    ]
    assert records[3].headers == (("h", b"x"),)
