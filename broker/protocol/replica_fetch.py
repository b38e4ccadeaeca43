"""A follower's Fetch (v12) encoded, and its answer decoded, by hand.

kio's generic writer and reader were the follower's largest cost per replicated write
after the log itself (bench/replication_cost.py with cProfile); these do the same for
the one version followers send. The request is byte-identical to kio's, and the answer
reads as kio reads it (tests/unit/protocol/test_replica_fetch.py).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.varint import read_uvarint
from odradek.broker.protocol.wire_primitives import INT32, array_length, string

FETCH_VERSION = 12
_TOP = struct.Struct(">iiiibii")  # replica, wait, min and max bytes, isolation, session, epoch
_POSITION = struct.Struct(">iiqiqi")
_ANSWER_TOP = struct.Struct(">ihi")  # throttle time, error code, session id
_PARTITION_HEAD = struct.Struct(">ihqqq")  # index, error, high watermark, LSO, log start
_ABORTED_SIZE = 16  # producer id, first offset (and a tagged section each)
_EMPTY_TAGS = b"\0"


@dataclass(frozen=True)
class FetchPosition:
    """Where a follower fetches one partition from."""

    partition: int
    current_leader_epoch: int
    fetch_offset: int
    log_start_offset: int
    partition_max_bytes: int
    last_fetched_epoch: int = -1


@dataclass(frozen=True)
class ReplicaFetchRequest:
    replica_id: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    session_id: int
    session_epoch: int
    topics: Mapping[str, Sequence[FetchPosition]]
    forgotten: Mapping[str, Sequence[int]]


@dataclass(frozen=True)
class FetchedData:
    """What the follower reads of one partition's answer."""

    partition_index: int
    error_code: ErrorCode
    high_watermark: int
    log_start_offset: int
    records: bytes | None


@dataclass(frozen=True)
class FetchedTopicData:
    topic: str
    partitions: list[FetchedData]


@dataclass(frozen=True)
class ReplicaFetchResponse:
    error_code: ErrorCode
    session_id: int
    responses: list[FetchedTopicData]


def encode_fetch_request(request: ReplicaFetchRequest) -> bytes:
    """The request's body (read_uncommitted, no rack, no cluster id)."""
    out = bytearray(
        _TOP.pack(
            request.replica_id,
            request.max_wait_ms,
            request.min_bytes,
            request.max_bytes,
            0,
            request.session_id,
            request.session_epoch,
        )
    )
    out += array_length(len(request.topics), True)
    for topic, positions in request.topics.items():
        out += string(topic, True) + array_length(len(positions), True)
        for position in positions:
            out += _POSITION.pack(
                position.partition,
                position.current_leader_epoch,
                position.fetch_offset,
                position.last_fetched_epoch,
                position.log_start_offset,
                position.partition_max_bytes,
            )
            out += _EMPTY_TAGS
        out += _EMPTY_TAGS
    out += array_length(len(request.forgotten), True)
    for topic, partitions in request.forgotten.items():
        out += string(topic, True) + array_length(len(partitions), True)
        for partition in partitions:
            out += INT32.pack(partition)
        out += _EMPTY_TAGS
    out += string("", True) + _EMPTY_TAGS  # rack id, then the body's tagged fields
    return bytes(out)


def decode_fetch_response(payload: bytes, offset: int) -> ReplicaFetchResponse:
    """The answer's body from ``offset``; tagged fields (diverging epoch, current leader,
    snapshot id) are skipped: a follower fetching from the leader's log end uses none.
    ValueError if it does not parse to its last byte."""
    try:
        return _decode(payload, offset)
    except (IndexError, struct.error) as error:
        raise ValueError(f"a Fetch answer of {len(payload)} bytes is cut short") from error


def _decode(payload: bytes, offset: int) -> ReplicaFetchResponse:
    _, error_code, session_id = _ANSWER_TOP.unpack_from(payload, offset)
    position = offset + _ANSWER_TOP.size
    topics, position = read_uvarint(payload, position)
    responses = []
    for _ in range(topics - 1):
        length, position = read_uvarint(payload, position)
        topic = payload[position : position + length - 1].decode()
        position += length - 1
        count, position = read_uvarint(payload, position)
        partitions = []
        for _ in range(count - 1):
            index, error, high_watermark, _, log_start = _PARTITION_HEAD.unpack_from(
                payload, position
            )
            position += _PARTITION_HEAD.size
            aborted, position = read_uvarint(payload, position)
            for _ in range(max(aborted - 1, 0)):
                position = _skip_tags(payload, position + _ABORTED_SIZE)
            position += 4  # preferred read replica
            size, position = read_uvarint(payload, position)
            records = payload[position : position + size - 1] if size else None
            position = _skip_tags(payload, position + max(size - 1, 0))
            partitions.append(
                FetchedData(index, ErrorCode(error), high_watermark, log_start, records)
            )
        responses.append(FetchedTopicData(topic, partitions))
        position = _skip_tags(payload, position)
    if _skip_tags(payload, position) != len(payload):
        raise ValueError(f"a Fetch answer of {len(payload)} bytes does not end where it should")
    return ReplicaFetchResponse(ErrorCode(error_code), session_id, responses)


def _skip_tags(payload: bytes, position: int) -> int:
    count, position = read_uvarint(payload, position)
    for _ in range(count):
        _, position = read_uvarint(payload, position)
        size, position = read_uvarint(payload, position)
        position += size
    return position
