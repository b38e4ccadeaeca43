"""Unknown tagged fields are skipped, as Kafka's spec asks, not fatal."""

from __future__ import annotations

import io
import sys

import pytest
from kio.index import load_request_schema
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.framing import decode_request, read_header
from odradek.broker.protocol.tagged_fields import strip_unknown_tagged_fields
from odradek.broker.protocol.varint import read_uvarint, write_uvarint


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


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**21, 2**31 - 1])
def test_uvarint_round_trips(value: int) -> None:
    assert read_uvarint(write_uvarint(value), 0) == (value, len(write_uvarint(value)))


def test_body_without_unknown_tags_is_unchanged() -> None:
    schema, value = _metadata_request()
    body = _encode(schema, value)
    assert strip_unknown_tagged_fields(schema, body) == body


def test_unknown_tag_in_nested_entity_is_dropped() -> None:
    schema, value = _metadata_request()
    body = _encode(schema, value)
    # The topic entity is a 16-byte topic id, the name and an empty tag section.
    end_of_topic = body.index(b"\x07orders") + 7
    with_tag = body[:end_of_topic] + bytes([1, 7, 1]) + b"z" + body[end_of_topic + 1 :]
    with pytest.raises(KeyError):
        entity_reader(schema)(with_tag, 0)
    assert entity_reader(schema)(strip_unknown_tagged_fields(schema, with_tag), 0)[0] == value


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
