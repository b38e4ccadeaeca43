"""Transaction markers as Kafka writes them: kafka-python's reader agrees on every field."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import ControlRecord, DefaultRecordBatch

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, encode_batch
from odradek.broker.protocol.records import read_header
from odradek.broker.protocol.transaction_markers import (
    MARKER_ATTRIBUTES,
    MarkerType,
    TransactionMarker,
    decode_marker,
    encode_marker,
)

markers = st.builds(
    TransactionMarker,
    producer_id=st.integers(0, 2**63 - 1),
    producer_epoch=st.integers(0, 32767),
    type=st.sampled_from(MarkerType),
    coordinator_epoch=st.integers(0, 2**31 - 1),
)


@given(markers)
def test_a_marker_reads_back_and_kafka_python_sees_a_control_record(
    marker: TransactionMarker,
) -> None:
    batch = encode_marker(marker, timestamp_ms=1_700_000_000_000)
    assert decode_marker(batch) == marker
    header = read_header(batch)
    assert header.is_control and header.is_transactional
    assert (header.producer_id, header.producer_epoch) == (
        marker.producer_id,
        marker.producer_epoch,
    )
    assert header.base_sequence == -1 and header.records_count == 1
    theirs = DefaultRecordBatch(batch)
    assert theirs.is_control_batch and theirs.is_transactional
    [record] = list(theirs)
    assert isinstance(record, ControlRecord)
    assert (record.version, record.commit) == (0, marker.commits)
    assert struct.unpack(">hi", record.value) == (0, marker.coordinator_epoch)


def control_batch(key: bytes | None, value: bytes | None) -> bytes:
    record = Record(offset=0, timestamp=0, key=key, value=value)
    return encode_batch(
        BatchSpec(attributes=MARKER_ATTRIBUTES, producer_id=7, producer_epoch=1, records=(record,))
    )


def test_later_key_and_value_versions_read_as_version_zero() -> None:
    marker = decode_marker(control_batch(struct.pack(">hh", 3, 1), struct.pack(">hi", 2, 9)))
    assert marker == TransactionMarker(7, 1, MarkerType.COMMIT, 9)


def test_other_control_records_are_not_markers() -> None:
    leader_change = control_batch(struct.pack(">hh", 0, 2), b"")
    assert decode_marker(leader_change) is None
    data = encode_batch(BatchSpec(records=(Record(0, 0, b"k", b"v"),)))
    assert decode_marker(data) is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, struct.pack(">hi", 0, 1)),
        (b"\x00", struct.pack(">hi", 0, 1)),
        (struct.pack(">hh", -1, 1), struct.pack(">hi", 0, 1)),
        (struct.pack(">hh", 0, 0), None),
        (struct.pack(">hh", 0, 1), b"\x00\x00"),
    ],
)
def test_a_malformed_marker_is_a_corrupt_message(key: bytes | None, value: bytes | None) -> None:
    with pytest.raises(KafkaError) as error:
        decode_marker(control_batch(key, value))
    assert error.value.code is ErrorCode.corrupt_message
