"""What Kafka's records of modern groups (KIP-848 consumer, KIP-932 share) have in common:
a key is its type then the group id (and the member id), not flexible; values hold arrays of
topic partitions by topic id, each entry ending with its tagged fields."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping

from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

VALUE_VERSION = 0


def encode_group_key(kind: int, group_id: str, member_id: str | None) -> bytes:
    out = FieldWriter().i16(kind).string(group_id)
    if member_id is not None:
        out.string(member_id)
    return out.done()


def encode_modern_key(
    kind: int, group_id: str, member_id: str, per_member: Collection[int]
) -> bytes:
    """The key of a record of ``kind``: with the member id if the kind is ``per_member``."""
    return encode_group_key(kind, group_id, member_id if kind in per_member else None)


def read_modern_key(kind: int, reader: FieldReader, per_member: Collection[int]) -> tuple[str, str]:
    """The group id and member id ("" for a group-wide kind) of a key of ``kind``."""
    group_id = reader.text()
    return group_id, reader.text() if kind in per_member else ""


def write_topic_partitions(
    out: FieldWriter, partitions: Mapping[uuid.UUID, Collection[int]]
) -> FieldWriter:
    out.compact_count(len(partitions))
    for topic, indexes in sorted(partitions.items(), key=lambda item: str(item[0])):
        out.uuid(topic).compact_count(len(indexes))
        for index in sorted(indexes):
            out.i32(index)
        out.tagged({})
    return out


def read_topic_partitions(reader: FieldReader) -> dict[uuid.UUID, frozenset[int]]:
    """The array ``write_topic_partitions`` writes (entries' tagged fields skipped)."""
    partitions = {}
    for _ in range(array_length(reader)):
        topic = reader.uuid()
        partitions[topic] = frozenset(reader.i32() for _ in range(array_length(reader)))
        reader.tagged()
    return partitions


def array_length(reader: FieldReader) -> int:
    """A compact array's length; these records never hold a null array."""
    count = reader.compact_nullable_count()
    if count is None:
        raise RecordFormatError("null array in a group record")
    return count
