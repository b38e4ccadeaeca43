"""A group lands on the partition Kafka would choose: Java's String.hashCode, sign masked."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.cluster.coordinator_partitions import java_string_hashcode
from odradek.broker.group.group_partition import partition_for_group


def test_hashcode_matches_java_for_known_strings() -> None:
    # values printed by Java's "...".hashCode()
    assert java_string_hashcode("") == 0
    assert java_string_hashcode("a") == 97
    assert java_string_hashcode("hello") == 99162322
    assert java_string_hashcode("polygenelubricants") == -(2**31)  # the famous one
    # U+1F600 is the surrogate pair D83D DE00: 0xD83D * 31 + 0xDE00
    assert java_string_hashcode("\U0001f600") == 1772899


def test_negative_hashcodes_are_masked_like_kafka_utils_abs() -> None:
    # Utils.abs(Integer.MIN_VALUE) is 0, where Math.abs would stay negative
    assert partition_for_group("polygenelubricants", 50) == 0


@given(st.text(), st.integers(1, 200))
def test_partition_is_in_range_and_hashcode_fits_32_bits(group: str, partitions: int) -> None:
    assert -(2**31) <= java_string_hashcode(group) < 2**31
    assert 0 <= partition_for_group(group, partitions) < partitions
