"""``__transaction_state`` records round-trip in Kafka's layout; bad ones are refused."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.protocol.record_fields import RecordFormatError
from odradek.broker.transaction.transaction_log_format import (
    StoredTransaction,
    TransactionState,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)

transactions = st.builds(
    StoredTransaction,
    producer_id=st.integers(0, 2**63 - 1),
    producer_epoch=st.integers(0, 32767),
    timeout_ms=st.integers(1, 2**31 - 1),
    state=st.sampled_from([s for s in TransactionState if s is not TransactionState.EMPTY]),
    partitions=st.dictionaries(
        st.text(min_size=1, max_size=20), st.frozensets(st.integers(0, 10_000), min_size=1)
    ),
    last_update_ms=st.integers(0, 2**62),
    start_ms=st.integers(-1, 2**62),
    previous_producer_id=st.integers(-1, 2**63 - 1),
    next_producer_id=st.integers(-1, 2**63 - 1),
    next_producer_epoch=st.integers(-1, 32767),
    client_version=st.integers(0, 2),
)


@given(st.text(max_size=100))
def test_a_key_is_its_version_and_transactional_id(transactional_id: str) -> None:
    encoded = encode_key(transactional_id)
    assert encoded[:2] == b"\x00\x00"
    assert decode_key(encoded) == transactional_id


@given(transactions)
def test_a_value_round_trips(value: StoredTransaction) -> None:
    assert decode_value(encode_value(value)) == value


def test_the_layout_is_kafkas_version_1() -> None:
    value = StoredTransaction(7, 3, 60000, TransactionState.ONGOING, {"t": frozenset({1, 0})}, 5, 4)
    expected = (
        struct.pack(">hqhib", 1, 7, 3, 60000, 1)
        + b"\x02"  # one topic (compact: count + 1)
        + b"\x02t" + b"\x03" + struct.pack(">ii", 0, 1) + b"\x00"  # its partitions, no tags
        + struct.pack(">qq", 5, 4)
        + b"\x00"  # every tagged field at its default
    )  # fmt: skip
    assert encode_value(value) == expected


def test_tagged_fields_are_written_when_not_their_default() -> None:
    value = StoredTransaction(
        8, 0, 60000, TransactionState.COMPLETE_COMMIT, {}, 5, 4,
        previous_producer_id=7, next_producer_id=-1, client_version=2,
    )  # fmt: skip
    encoded = encode_value(value)
    tags = b"\x02" + b"\x00\x08" + struct.pack(">q", 7) + b"\x02\x02" + struct.pack(">h", 2)
    assert encoded.endswith(struct.pack(">qq", 5, 4) + tags)
    assert decode_value(encoded) == value


def test_version_0_is_read() -> None:
    data = (
        struct.pack(">hqhib", 0, 7, 3, 60000, 1)
        + struct.pack(">i", 1)
        + struct.pack(">h", 1) + b"t" + struct.pack(">iii", 2, 0, 1)
        + struct.pack(">qq", 5, 4)
    )  # fmt: skip
    expected = StoredTransaction(
        7, 3, 60000, TransactionState.ONGOING, {"t": frozenset({0, 1})}, 5, 4
    )
    assert decode_value(data) == expected


def test_an_empty_transaction_has_null_partitions() -> None:
    value = StoredTransaction(7, 0, 60000, TransactionState.EMPTY, {}, 5, -1)
    encoded = encode_value(value)
    assert encoded[2 + 8 + 2 + 4 + 1 :][:1] == b"\x00"
    assert decode_value(encoded) == value


@pytest.mark.parametrize(
    "data",
    [
        struct.pack(">hqhib", 2, 7, 0, 1, 0),  # a later version
        struct.pack(">hqhib", 0, 7, 0, 1, 9) + struct.pack(">iqq", -1, 0, 0),  # unknown state
        struct.pack(">hqhib", 0, 7, 0, 1, 0),  # truncated
        struct.pack(">hqhib", 0, 7, 0, 1, 0) + struct.pack(">iqq", -1, 0, 0) + b"x",  # extra
    ],
)
def test_unreadable_values_are_refused(data: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_value(data)
