"""The coordinator's records round-trip, and unreadable ones are refused rather than misread."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.group.record_format import (
    CommittedOffset,
    GroupKey,
    OffsetKey,
    StoredGroup,
    StoredMember,
    decode_group,
    decode_key,
    decode_offset,
    encode_group,
    encode_key,
    encode_offset,
)
from odradek.broker.protocol.record_fields import RecordFormatError

texts = st.text(max_size=40)
i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)

offset_keys = st.builds(OffsetKey, texts, texts, i32)
group_keys = st.builds(GroupKey, texts)
offsets = st.builds(CommittedOffset, i64, i32, st.none() | texts, i64, i64)
members = st.builds(
    StoredMember, texts, st.none() | texts, texts, texts, i32, i32, st.binary(), st.binary()
)
groups = st.builds(
    StoredGroup,
    st.none() | texts,
    i32,
    st.none() | texts,
    st.none() | texts,
    i64,
    st.lists(members, max_size=5).map(tuple),
)


@given(offset_keys | group_keys)
def test_keys_round_trip(key: OffsetKey | GroupKey) -> None:
    assert decode_key(encode_key(key)) == key


@given(offsets)
def test_offset_values_round_trip(value: CommittedOffset) -> None:
    assert decode_offset(encode_offset(value)) == value


@given(groups)
def test_group_values_round_trip(value: StoredGroup) -> None:
    assert decode_group(encode_group(value)) == value


def test_offset_and_group_keys_of_one_group_differ() -> None:
    assert encode_key(GroupKey("g")) != encode_key(OffsetKey("g", "", 0))


def test_an_unknown_value_version_is_refused() -> None:
    data = bytearray(encode_offset(CommittedOffset(1, 0, None, 0)))
    data[0:2] = (7).to_bytes(2, "big")
    with pytest.raises(RecordFormatError, match="version 7"):
        decode_offset(bytes(data))


def test_an_unknown_key_type_is_refused() -> None:
    with pytest.raises(RecordFormatError, match="key type"):
        decode_key(b"\x00\x09\x00\x01g")


@given(groups, st.data())
def test_truncated_or_padded_records_are_refused(value: StoredGroup, data: st.DataObject) -> None:
    encoded = encode_group(value)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(RecordFormatError):
        decode_group(encoded[:cut])
    with pytest.raises(RecordFormatError):
        decode_group(encoded + b"\0")
