"""A minimal raw Kafka client for tests: frames built and read with kio.

Used where real clients hide what we must see: exact error codes, batch
headers as stored, deliberately broken frames.
"""

from __future__ import annotations

import datetime
import io
import itertools
import socket
import ssl
import struct
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder
from kio.index import load_request_schema as _load_request_schema
from kio.index import load_response_schema
from kio.serial import entity_reader, entity_writer
from kio.static.primitive import i8, i16, i32, i32Timedelta, i64

API_PRODUCE = 0
API_FETCH = 1
API_LIST_OFFSETS = 2
API_METADATA = 3
API_INIT_PRODUCER_ID = 22
API_API_VERSIONS = 18

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1

BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = 61
LOG_OVERHEAD = 12

_correlation_ids = itertools.count(1)


def load_request_schema(api_key: int, version: int) -> Any:
    """kio's request class for (api_key, version), untyped: its fields vary by version."""
    return _load_request_schema(api_key, version)


def nested(schema: type, name: str) -> Any:
    """A nested entity class (``PartitionProduceData`` ...) of a kio schema."""
    return getattr(sys.modules[schema.__module__], name)


def encode_request(
    api_key: int, version: int, body: Any, correlation_id: int, client_id: str = "odradek-tests"
) -> bytes:
    """A whole frame (size prefix, header, body) for a kio request entity."""
    schema = type(body)
    header_schema = schema.__header_schema__
    buffer = io.BytesIO()
    entity_writer(header_schema)(
        buffer,
        header_schema(
            request_api_key=i16(api_key),
            request_api_version=i16(version),
            correlation_id=i32(correlation_id),
            client_id=client_id,
        ),
    )
    entity_writer(schema)(buffer, body)
    payload = buffer.getvalue()
    return struct.pack(">i", len(payload)) + payload


def encode_header_only(api_key: int, version: int, correlation_id: int, rest: bytes) -> bytes:
    """A frame with a v1 request header (no tagged fields) followed by arbitrary bytes.

    v1 headers parse for every api key and version, so this reaches dispatch
    even for keys and versions kio has no schema for.
    """
    client_id = b"odradek-fuzz"
    payload = (
        struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id + rest
    )
    return struct.pack(">i", len(payload)) + payload


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(chunks)} of {size} bytes")
        chunks += chunk
    return bytes(chunks)


def recv_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    return recv_exactly(sock, size)


@dataclass(frozen=True)
class Response:
    correlation_id: int
    body: Any


def decode_response(api_key: int, version: int, frame: bytes) -> Response:
    schema = load_response_schema(api_key, version)
    header, consumed = entity_reader(schema.__header_schema__)(frame, 0)
    body, _ = entity_reader(schema)(frame, consumed)
    return Response(correlation_id=int(header.correlation_id), body=body)


@dataclass(frozen=True)
class Request:
    """A request entity with the api key and version to send it as."""

    api_key: int
    version: int
    body: Any

    def __iter__(self) -> Iterator[Any]:
        return iter((self.api_key, self.version, self.body))

    def encode(self, correlation_id: int) -> bytes:
        return encode_request(self.api_key, self.version, self.body, correlation_id)


def api_versions_request(version: int = 3) -> Request:
    schema = load_request_schema(API_API_VERSIONS, version)
    fields = (
        {"client_software_name": "odradek-tests", "client_software_version": "1"}
        if version >= 3
        else {}
    )
    return Request(API_API_VERSIONS, version, schema(**fields))


def metadata_request(topics: list[str] | None, auto_create: bool = False) -> Request:
    schema = load_request_schema(API_METADATA, 12)
    topic_schema = nested(schema, "MetadataRequestTopic")
    return Request(
        API_METADATA,
        12,
        schema(
            topics=None
            if topics is None
            else tuple(topic_schema(topic_id=None, name=name) for name in topics),
            allow_auto_topic_creation=auto_create,
            include_topic_authorized_operations=False,
        ),
    )


def produce_request(topic: str, partition: int, records: bytes, acks: int = -1) -> Request:
    schema = load_request_schema(API_PRODUCE, 9)
    partition_data = nested(schema, "PartitionProduceData")(index=i32(partition), records=records)
    return Request(
        API_PRODUCE,
        9,
        schema(
            transactional_id=None,
            acks=i16(acks),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)),
            topic_data=(
                nested(schema, "TopicProduceData")(name=topic, partition_data=(partition_data,)),
            ),
        ),
    )


def fetch_request(
    topic: str,
    partition: int,
    offset: int,
    max_bytes: int = 1 << 20,
    partition_max_bytes: int | None = None,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    isolation_level: int = 0,
) -> Request:
    schema = load_request_schema(API_FETCH, 11)
    fetch_partition = nested(schema, "FetchPartition")(
        partition=i32(partition),
        current_leader_epoch=i32(-1),
        fetch_offset=i64(offset),
        log_start_offset=i64(-1),
        partition_max_bytes=i32(max_bytes if partition_max_bytes is None else partition_max_bytes),
    )
    return Request(
        API_FETCH,
        11,
        schema(
            replica_id=i32(-1),
            max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=max_wait_ms)),
            min_bytes=i32(min_bytes),
            max_bytes=i32(max_bytes),
            isolation_level=i8(isolation_level),
            session_id=i32(0),
            session_epoch=i32(-1),
            topics=(nested(schema, "FetchTopic")(topic=topic, partitions=(fetch_partition,)),),
            forgotten_topics_data=(),
            rack_id="",
        ),
    )


def list_offsets_request(
    topic: str, partition: int, timestamp: int, isolation_level: int = 0
) -> Request:
    schema = load_request_schema(API_LIST_OFFSETS, 7)
    list_partition = nested(schema, "ListOffsetsPartition")(
        partition_index=i32(partition), current_leader_epoch=i32(-1), timestamp=i64(timestamp)
    )
    return Request(
        API_LIST_OFFSETS,
        7,
        schema(
            replica_id=i32(-1),
            isolation_level=i8(isolation_level),
            topics=(nested(schema, "ListOffsetsTopic")(name=topic, partitions=(list_partition,)),),
        ),
    )


def init_producer_id_request() -> Request:
    schema = load_request_schema(API_INIT_PRODUCER_ID, 4)
    return Request(
        API_INIT_PRODUCER_ID,
        4,
        schema(
            transactional_id=None,
            transaction_timeout=i32Timedelta.parse(datetime.timedelta(minutes=1)),
            producer_id=i64(-1),
            producer_epoch=i16(-1),
        ),
    )


class WireClient:
    """One connection; ``call`` sends a kio request entity and decodes the answer."""

    def __init__(
        self, host: str, port: int, timeout: float = 10.0, tls: ssl.SSLContext | None = None
    ) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        if tls is not None:  # an SSL listener
            self.sock = tls.wrap_socket(self.sock, server_hostname=host)

    @classmethod
    def to(
        cls, bootstrap: str, timeout: float = 10.0, tls: ssl.SSLContext | None = None
    ) -> WireClient:
        host, port = bootstrap.rsplit(":", 1)
        return cls(host, int(port), timeout, tls)

    def call(self, api_key: int, version: int, body: Any) -> Any:
        correlation_id = self.send(Request(api_key, version, body))
        response = decode_response(api_key, version, recv_frame(self.sock))
        assert response.correlation_id == correlation_id, "response to another request"
        return response.body

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests the tests need ---------------------------------------------

    def send(self, request: Request, correlation_id: int | None = None) -> int:
        """Send without reading an answer (acks=0, pipelining); returns the correlation id."""
        correlation_id = next(_correlation_ids) if correlation_id is None else correlation_id
        self.sock.sendall(request.encode(correlation_id))
        return correlation_id

    def api_versions(self, version: int = 3) -> Any:
        return self.call(*api_versions_request(version))

    def metadata(self, topics: list[str] | None, auto_create: bool = False) -> Any:
        return self.call(*metadata_request(topics, auto_create))

    def produce(self, topic: str, partition: int, records: bytes, acks: int = -1) -> Any:
        """Produce v9; returns the single partition response."""
        response = self.call(*produce_request(topic, partition, records, acks))
        return response.responses[0].partition_responses[0]

    def fetch(
        self, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20, **limits: int
    ) -> Any:
        """Fetch v11 (no waiting unless ``max_wait_ms``/``min_bytes`` say so); returns the
        single partition response."""
        response = self.call(*fetch_request(topic, partition, offset, max_bytes, **limits))
        return response.responses[0].partitions[0]

    def init_producer_id(self) -> tuple[int, int]:
        """A fresh idempotent producer id and epoch."""
        response = self.call(*init_producer_id_request())
        assert response.error_code.value == 0, f"InitProducerId error {response.error_code!r}"
        return int(response.producer_id), int(response.producer_epoch)

    def list_offset(
        self, topic: str, partition: int, timestamp: int, isolation_level: int = 0
    ) -> int:
        """ListOffsets v7 for one partition; asserts no error and returns the offset."""
        response = self.call(*list_offsets_request(topic, partition, timestamp, isolation_level))
        answer = response.topics[0].partitions[0]
        assert answer.error_code.value == 0, f"ListOffsets error {answer.error_code!r}"
        return int(answer.offset)

    def wait_for_topic(self, topic: str, auto_create: bool = True, attempts: int = 50) -> Any:
        """Metadata for ``topic`` once it has partitions with leaders (creating it if asked)."""

        last: Any = None
        for _ in range(attempts):
            last = self.metadata([topic], auto_create=auto_create).topics[0]
            if (
                last.error_code.value == 0
                and last.partitions
                and all(p.error_code.value == 0 and p.leader_id >= 0 for p in last.partitions)
            ):
                return last
            time.sleep(0.1)
        raise AssertionError(f"topic {topic} not ready: {last!r}")


@dataclass(frozen=True)
class BatchInfo:
    """The header fields of one stored batch, and where it sits."""

    position: int
    base_offset: int
    batch_length: int
    magic: int
    attributes: int
    last_offset_delta: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        return self.batch_length + LOG_OVERHEAD

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1


def parse_batches(data: bytes) -> tuple[list[BatchInfo], int]:
    """Whole v2 batches at the start of ``data``; returns them and the bytes they span.

    Stops at the first incomplete batch (a torn tail, or a fetch cut short).
    """
    batches: list[BatchInfo] = []
    position = 0
    while len(data) - position >= LOG_OVERHEAD:
        base_offset, batch_length = struct.unpack_from(">qi", data, position)
        size = batch_length + LOG_OVERHEAD
        if batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD or position + size > len(data):
            break
        fields = BATCH_HEADER.unpack_from(data, position)
        batches.append(
            BatchInfo(
                position=position,
                base_offset=base_offset,
                batch_length=batch_length,
                magic=fields[3],
                attributes=fields[5],
                last_offset_delta=fields[6],
                producer_id=fields[9],
                producer_epoch=fields[10],
                base_sequence=fields[11],
                records_count=fields[12],
            )
        )
        position += size
    return batches, position


def build_batch(
    values: list[bytes],
    base_timestamp_ms: int = 1_700_000_000_000,
    compression: int = 0,
    producer: tuple[int, int, int] = (-1, -1, -1),
    transactional: bool = False,
) -> bytearray:
    """A valid v2 batch (CRC-32C filled in) built with kafka-python's builder.

    ``producer`` is (producer id, epoch, base sequence) for idempotent (or, with
    ``transactional``, transactional) batches.
    """
    producer_id, producer_epoch, base_sequence = producer
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 24,
    )
    for delta, value in enumerate(values):
        builder.append(
            delta, timestamp=base_timestamp_ms + delta, key=None, value=value, headers=[]
        )
    batch: bytearray = builder.build()
    return batch
