"""Bodies are walked before kio's native reader decodes them: arrays claiming more
elements than bytes remain are refused (kio would reserve room for them first, and a
refused reservation aborts the process), and unknown tagged fields are skipped, as
Kafka's spec asks."""

from __future__ import annotations

import dataclasses
import datetime
import io
import itertools
import struct
import sys
import uuid

import pytest
from kio.index import UnknownEntity, load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map, schema_name_map
from kio.serial import _introspect as kio_fields
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.body_decoding import MalformedBody, checked_body, decode_body
from odradek.broker.protocol.framing import decode_request, read_header
from odradek.broker.protocol.varint import read_uvarint, write_uvarint

CLAIMS_2_POW_32 = write_uvarint(2**32 - 1)  # a compact array of 2**32 - 2 elements
CLAIMS_2_POW_31 = struct.pack(">i", 2**31 - 1)

SAMPLE_VALUES = {
    "bool": True, "int8": 1, "uint8": 1, "int16": 1, "uint16": 1, "int32": 1, "uint32": 1,
    "int64": 1, "uint64": 1, "float64": 0.5, "string": "x", "bytes": b"x", "records": b"x",
    "uuid": uuid.UUID(int=1), "error_code": ErrorCode.none,
    "timedelta_i32": datetime.timedelta(milliseconds=1),
    "timedelta_i64": datetime.timedelta(milliseconds=1),
    "datetime_i64": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC),
}  # fmt: skip


def _encode(schema: type, value: object) -> bytes:
    buffer = io.BytesIO()
    entity_writer(schema)(buffer, value)
    return buffer.getvalue()


def _metadata_request() -> tuple[type, object]:
    schema = load_request_schema(3, 12)
    module = sys.modules[schema.__module__]
    topic = module.MetadataRequestTopic(name="orders", topic_id=None)
    return schema, schema(
        topics=(topic,), allow_auto_topic_creation=True, include_topic_authorized_operations=False
    )


def _all_schemas() -> dict[str, list[type]]:
    """Every request and response schema kio has, each version, by API."""
    schemas: dict[str, list[type]] = {}
    for api_key, name in api_key_map.items():
        for version in schema_name_map[name]:
            for load in (load_request_schema, load_response_schema):
                try:
                    schemas.setdefault(name, []).append(load(api_key, version))
                except UnknownEntity:  # an API kio knows only one direction of
                    continue
    return schemas


ALL_SCHEMAS = _all_schemas()


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**21, 2**31 - 1])
def test_uvarint_round_trips(value: int) -> None:
    assert read_uvarint(write_uvarint(value), 0) == (value, len(write_uvarint(value)))


def _sample(schema: type, nulls: bool) -> object:
    """An entity of ``schema`` with every field set, arrays of one element included; with
    ``nulls``, every nullable field that is not tagged is null."""
    values: dict[str, object] = {}
    for field in dataclasses.fields(schema):
        kind = kio_fields.classify_field(field)
        if nulls and kio_fields.is_optional(field) and kio_fields.get_field_tag(field) is None:
            values[field.name] = None
            continue
        if isinstance(kind, (kio_fields.EntityField, kio_fields.EntityTupleField)):
            value = _sample(kind.type_, nulls)
        else:
            value = SAMPLE_VALUES[kio_fields.get_schema_field_type(field)]
        tuple_kinds = (kio_fields.PrimitiveTupleField, kio_fields.EntityTupleField)
        values[field.name] = (value,) if isinstance(kind, tuple_kinds) else value
    return schema(**values)


@pytest.mark.parametrize("api", sorted(ALL_SCHEMAS))
def test_walk_ends_where_kio_does(api: str) -> None:
    """Each request and response kio knows, every field set (or null), passes the walk
    unchanged, and the walk needs its last byte: it reads the layout kio's reader reads."""
    for schema, nulls in itertools.product(ALL_SCHEMAS[api], (False, True)):
        entity = _sample(schema, nulls)
        body = _encode(schema, entity)
        assert checked_body(schema, body, 0) is body, schema
        assert decode_body(schema, body, 0) == entity, schema
        if body:
            with pytest.raises(MalformedBody):
                checked_body(schema, body[:-1], 0)


@pytest.mark.parametrize(
    ("api_key", "version", "body", "claimed"),
    [
        (3, 12, CLAIMS_2_POW_32, 2**32 - 2),  # Metadata topics, compact
        (3, 4, CLAIMS_2_POW_31, 2**31 - 1),  # Metadata topics, int32 count
        # Produce v9: no transactional id, acks, timeout, one topic "t" whose partitions claim
        (0, 9, b"\x00\xff\xff\x00\x00\x75\x30\x02\x02t" + CLAIMS_2_POW_32, 2**32 - 2),
        # BrokerHeartbeat v1: broker 1, epoch, offset, flags, then tag 0 (offline log dirs)
        (
            63,
            1,
            bytes(4) + bytes(8) + bytes(8) + b"\x00\x00\x01\x00\x05" + CLAIMS_2_POW_32,
            2**32 - 2,
        ),
    ],
    ids=["compact", "int32-count", "nested", "in-a-tagged-field"],
)
def test_array_claiming_more_elements_than_bytes_is_refused(
    api_key: int, version: int, body: bytes, claimed: int | None
) -> None:
    schema = load_request_schema(api_key, version)
    with pytest.raises(MalformedBody, match="an array claims") as refused:
        decode_body(schema, body, 0)
    if claimed is not None:
        assert f"claims {claimed} elements" in str(refused.value)


def test_fixed_size_elements_must_all_fit() -> None:
    """OffsetForLeaderEpoch v2 partitions are 12 bytes each: 2 claimed need 24."""
    schema = load_request_schema(23, 2)
    body = b"\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x02" + bytes(23)
    with pytest.raises(MalformedBody, match="claims 2 elements where 23 bytes remain"):
        checked_body(schema, body, 0)
    assert checked_body(schema, body + b"\x00", 0).endswith(bytes(24))


def test_body_without_unknown_tags_is_unchanged() -> None:
    schema, value = _metadata_request()
    body = _encode(schema, value)
    assert checked_body(schema, body, 0) is body


def test_unknown_tag_in_nested_entity_is_dropped() -> None:
    schema, value = _metadata_request()
    body = _encode(schema, value)
    # The topic entity is a 16-byte topic id, the name and an empty tag section.
    end_of_topic = body.index(b"\x07orders") + 7
    with_tag = body[:end_of_topic] + bytes([1, 7, 1]) + b"z" + body[end_of_topic + 1 :]
    with pytest.raises(KeyError):
        entity_reader(schema)(with_tag, 0)
    assert checked_body(schema, with_tag, 0) == body
    assert decode_body(schema, with_tag, 0) == value


def test_unknown_tags_inside_a_known_tagged_value_and_beside_it_are_dropped() -> None:
    schema = load_request_schema(1, 15)  # Fetch: tag 1 is the replica state, an entity
    state = sys.modules[schema.__module__].ReplicaState(replica_id=1, replica_epoch=2)
    value = dataclasses.replace(_sample(schema, False), cluster_id=None, replica_state=state)
    body = _encode(schema, value)
    state_bytes = b"\x00\x00\x00\x01" + b"\x00" * 7 + b"\x02"
    assert body.endswith(b"\x01\x01\x0d" + state_bytes + b"\x00")
    with_tags = body[:-16] + b"\x02\x01\x10" + state_bytes + b"\x01\x07\x01z" + b"\x09\x00"
    assert len(checked_body(schema, with_tags, 0)) == len(body)  # both dropped, 3 + 2 bytes
    assert decode_body(schema, with_tags, 0) == value


def test_request_with_unknown_tags_in_header_and_body_decodes() -> None:
    schema = load_request_schema(18, 3)
    body = _encode(schema, schema(client_software_name="app", client_software_version="1.0"))
    body_with_tag = body[:-1] + bytes([1, 9, 2]) + b"ab"
    header = b"\x00\x12\x00\x03\x00\x00\x00\x07\x00\x03cli" + bytes([1, 5, 1]) + b"x"
    request = decode_request(header + body_with_tag)
    assert request.header.correlation_id == 7
    assert request.header.client_id == "cli"
    assert request.body.client_software_name == "app"
    assert read_header(header + body_with_tag, flexible=True).body_offset == len(header)
