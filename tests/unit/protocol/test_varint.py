"""Record fields' zigzag varints (varlongs) read back as written, at every length, and a
varint longer than ten bytes is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.protocol.varint import read_varint, write_varint

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(INT64, st.binary(max_size=3))
def test_varints_read_back_as_written_at_any_position(value: int, prefix: bytes) -> None:
    encoded = write_varint(value)
    assert read_varint(prefix + encoded + b"\x7f", len(prefix)) == (
        value,
        len(prefix) + len(encoded),
    )


@pytest.mark.parametrize(
    ("encoded", "value"),
    [(b"\x00", 0), (b"\x01", -1), (b"\x02", 1), (b"\x7f", -64), (b"\x80\x01", 64)],
)
def test_zigzag_maps_small_magnitudes_to_short_encodings(encoded: bytes, value: int) -> None:
    assert read_varint(encoded, 0) == (value, len(encoded))


def test_a_varint_of_more_than_ten_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="varint too long"):
        read_varint(b"\xff" * 11, 0)


def test_a_varint_cut_short_raises_index_error() -> None:
    with pytest.raises(IndexError):
        read_varint(b"\x80\x80", 0)
