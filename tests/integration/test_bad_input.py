"""Bad input on the wire (issue 2, "What it must show" point 3).

Random and mutated frames (bad sizes, unknown api keys and versions,
truncated bodies, random bytes) are sent on raw sockets. After each one the
broker process is alive and a separate connection still gets correct
ApiVersions and Metadata answers. A produce whose batch fails its CRC gets
CORRUPT_MESSAGE and appends nothing.
"""

from __future__ import annotations

import contextlib
import resource
import socket
import struct
import time
from collections.abc import Iterator

import pytest
from broker_process import Broker, unique_name
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_wire import (
    API_API_VERSIONS,
    API_METADATA,
    LATEST_TIMESTAMP,
    Request,
    WireClient,
    api_versions_request,
    build_batch,
    decode_response,
    encode_header_only,
    encode_request,
    fetch_request,
    list_offsets_request,
    load_request_schema,
    metadata_request,
    produce_request,
    recv_frame,
)

CORRUPT_MESSAGE = 2
UNSUPPORTED_VERSION = 35
SOCKET_REQUEST_MAX_BYTES = 104857600  # Kafka's default for socket.request.max.bytes
CLOSE_TIMEOUT_S = 5.0
FUZZ_SETTINGS = settings(
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=False,
)


@pytest.fixture(scope="module")
def topic(broker: Broker) -> str:
    name = unique_name("bad-input")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=True)
    return name


@pytest.fixture(scope="module", autouse=True)
def address_space_limited(broker: Broker) -> Iterator[None]:
    """The broker's address space limited to what it maps now and 1 GiB more, for the
    module: a reservation of many GiB fails as where the kernel does not overcommit
    memory (Debian's default until a kubelet changes it), so bad input that makes the
    broker reserve one is caught whatever the machine's setting."""
    soft, hard = resource.prlimit(broker.pid, resource.RLIMIT_AS)
    limit = broker.address_space_bytes() + (1 << 30)
    resource.prlimit(broker.pid, resource.RLIMIT_AS, (limit, hard))
    yield
    with contextlib.suppress(ProcessLookupError):  # a broker that died is reported
        resource.prlimit(broker.pid, resource.RLIMIT_AS, (soft, hard))


@pytest.fixture(scope="module")
def watchdog(broker: Broker) -> Iterator[WireClient]:
    """A long-lived healthy connection, opened before any bad input is sent."""
    with WireClient.to(broker.bootstrap) as client:
        yield client


def assert_broker_healthy(broker: Broker, watchdog: WireClient) -> None:
    """The process is alive, and both an old and a new connection get correct answers."""
    assert broker.is_running(), f"broker died: {broker.state()}"
    for client in (watchdog, WireClient.to(broker.bootstrap)):
        versions = client.api_versions(3)
        assert versions.error_code.value == 0
        ranges = {
            int(k.api_key): (int(k.min_version), int(k.max_version)) for k in versions.api_keys
        }
        assert ranges.get(API_API_VERSIONS, (9, -1))[0] <= 3 <= ranges[API_API_VERSIONS][1]
        metadata = client.metadata(None)
        assert [(b.host, b.port) for b in metadata.brokers] == [("127.0.0.1", broker.port)]
        if client is not watchdog:
            client.close()


def exchange(broker: Broker, data: bytes, half_close: bool = True) -> bytes:
    """Send ``data`` on a new connection, optionally signal EOF, return all bytes received
    until the broker closes (or ``CLOSE_TIMEOUT_S`` passes)."""
    received = bytearray()
    with socket.create_connection(("127.0.0.1", broker.port), timeout=CLOSE_TIMEOUT_S) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + CLOSE_TIMEOUT_S
        with contextlib.suppress(OSError):
            while time.monotonic() < deadline:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
    return bytes(received)


def closed_by_broker(broker: Broker, data: bytes) -> bool:
    """Whether the broker closes the connection after ``data`` without our EOF."""
    with socket.create_connection(("127.0.0.1", broker.port), timeout=CLOSE_TIMEOUT_S) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(data)
        try:
            while sock.recv(65536):
                pass
        except TimeoutError:
            return False
        except OSError:  # reset counts as closed
            return True
        return True


# -- valid requests to mutate ------------------------------------------------------------------


def valid_requests(topic: str) -> list[bytes]:
    """Well-formed frames of the APIs clients use most, to mutate."""
    requests = [
        api_versions_request(0),
        api_versions_request(3),
        Request(API_METADATA, 1, load_request_schema(API_METADATA, 1)(topics=None)),
        metadata_request([topic]),
        produce_request(topic, 0, bytes(build_batch([b"fuzz", b"me"]))),
        fetch_request(topic, 0, 0),
        list_offsets_request(topic, 0, LATEST_TIMESTAMP),
    ]
    return [request.encode(correlation_id=7) for request in requests]


@st.composite
def mutated_request(draw: st.DrawFn, requests: list[bytes]) -> bytes:
    frame = bytearray(draw(st.sampled_from(requests)))
    mutation = draw(st.sampled_from(["flip", "truncate", "short-body", "insert", "resize"]))
    if mutation == "flip":
        for _ in range(draw(st.integers(1, 4))):
            index = draw(st.integers(4, len(frame) - 1))
            frame[index] ^= draw(st.integers(1, 255))
    elif mutation == "truncate":  # size prefix consistent with the shorter body
        cut = draw(st.integers(0, len(frame) - 5))
        frame = bytearray(struct.pack(">i", cut)) + frame[4 : 4 + cut]
    elif mutation == "short-body":  # size prefix promises more than is sent
        frame = frame[: draw(st.integers(4, len(frame) - 1))]
    elif mutation == "insert":
        index = draw(st.integers(4, len(frame)))
        extra = draw(st.binary(min_size=1, max_size=32))
        frame = frame[:index] + extra + frame[index:]
        frame[:4] = struct.pack(">i", len(frame) - 4)
    else:
        frame[:4] = struct.pack(">i", draw(st.integers(-(2**31), 2**31 - 1)))
    return bytes(frame)


# -- fuzz ----------------------------------------------------------------------------------------


@pytest.mark.slow
@FUZZ_SETTINGS
@given(data=st.binary(min_size=1, max_size=512))
def test_broker_survives_random_bytes(broker: Broker, watchdog: WireClient, data: bytes) -> None:
    exchange(broker, data)
    assert_broker_healthy(broker, watchdog)


@pytest.mark.slow
@FUZZ_SETTINGS
@given(body=st.binary(max_size=512))
def test_broker_survives_frames_with_random_bodies(
    broker: Broker, watchdog: WireClient, body: bytes
) -> None:
    exchange(broker, struct.pack(">i", len(body)) + body)
    assert_broker_healthy(broker, watchdog)


@pytest.mark.slow
@given(
    api_key=st.one_of(st.integers(0, 80), st.integers(-(2**15), 2**15 - 1)),
    version=st.one_of(st.integers(-1, 20), st.integers(-(2**15), 2**15 - 1)),
    rest=st.binary(max_size=128),
)
@settings(FUZZ_SETTINGS, max_examples=300)
def test_broker_survives_any_api_key_and_version_with_garbage_body(
    broker: Broker, watchdog: WireClient, api_key: int, version: int, rest: bytes
) -> None:
    reply = exchange(broker, encode_header_only(api_key, version, 4242, rest))
    if len(reply) >= 8:  # whatever is answered must answer this request
        assert struct.unpack_from(">i", reply, 4)[0] == 4242
    assert_broker_healthy(broker, watchdog)


@pytest.mark.slow
@settings(FUZZ_SETTINGS, max_examples=500)
@given(data=st.data())
def test_broker_survives_mutated_valid_requests(
    broker: Broker, watchdog: WireClient, topic: str, data: st.DataObject
) -> None:
    exchange(broker, data.draw(mutated_request(valid_requests(topic))))
    assert_broker_healthy(broker, watchdog)


# -- specific cases ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size",
    [-1, -(2**31), 0, SOCKET_REQUEST_MAX_BYTES + 1, 2**30, 2**31 - 1],
    ids=["minus-one", "most-negative", "zero", "just-over-limit", "1GiB", "2GiB"],
)
def test_frame_with_bad_size_is_refused_by_closing_connection(
    broker: Broker, watchdog: WireClient, size: int
) -> None:
    rss_before = broker.rss_bytes()
    assert closed_by_broker(broker, struct.pack(">i", size) + b"\x00" * 65536), (
        f"broker kept a connection open after a frame size of {size}"
    )
    assert broker.rss_bytes() - rss_before < 64 << 20, "a refused frame was read into memory"
    assert_broker_healthy(broker, watchdog)


CLAIMS_2_POW_32 = b"\xff\xff\xff\xff\x0f"  # a compact array count: 2**32 - 2 elements


@pytest.mark.parametrize(
    ("api_key", "version", "rest"),
    [
        (API_METADATA, 12, b"\x00" + CLAIMS_2_POW_32),  # empty header tags, then the topics
        (API_METADATA, 4, b"\x7f\xff\xff\xff"),  # an int32 count: 2**31 - 1 topics
        # Produce v9: no transactional id, acks -1, a timeout, one topic "t" whose partitions
        (0, 9, b"\x00\x00\xff\xff\x00\x00\x75\x30\x02\x02t" + CLAIMS_2_POW_32),
    ],
    ids=["compact", "int32-count", "nested"],
)
def test_array_claiming_billions_of_elements_closes_only_that_connection(
    broker: Broker, watchdog: WireClient, api_key: int, version: int, rest: bytes
) -> None:
    """kio's reader reserved room for the elements an array claims before reading them;
    where the reservation failed, the allocator aborted the whole broker (a CI run's
    SIGABRT). The count is now refused first, as Kafka's parser refuses it."""
    assert exchange(broker, encode_header_only(api_key, version, 4244, rest)) == b""
    assert_broker_healthy(broker, watchdog)


def test_truncated_frame_followed_by_eof_closes_only_that_connection(
    broker: Broker, watchdog: WireClient
) -> None:
    assert exchange(broker, struct.pack(">i", 100) + b"\x00\x12\x00\x00" + b"x" * 6) == b""
    assert_broker_healthy(broker, watchdog)


def test_api_versions_with_unsupported_version_answers_unsupported_version_in_v0_body(
    broker: Broker, watchdog: WireClient
) -> None:
    client_id = b"fuzz"
    header_v2 = struct.pack(">hhih", API_API_VERSIONS, 99, 777, len(client_id)) + client_id + b"\0"
    body_v3 = b"\x05fuzz" + b"\x021" + b"\0"  # compact strings + empty tagged fields
    payload = header_v2 + body_v3
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        response = decode_response(API_API_VERSIONS, 0, recv_frame(sock))
    assert response.correlation_id == 777
    assert response.body.error_code.value == UNSUPPORTED_VERSION
    ranges = {
        int(k.api_key): (int(k.min_version), int(k.max_version)) for k in response.body.api_keys
    }
    assert ranges.get(API_API_VERSIONS) == (0, 4), ranges
    assert_broker_healthy(broker, watchdog)


@pytest.mark.parametrize(
    ("api_key", "version"),
    [(9999, 0), (-1, 0), (API_METADATA, 99), (0, 99), (0, 2), (1, 3)],
    ids=["unknown-key", "negative-key", "metadata-v99", "produce-v99", "produce-v2", "fetch-v3"],
)
def test_unknown_api_or_version_gets_error_or_close_and_other_connections_work(
    broker: Broker, watchdog: WireClient, api_key: int, version: int
) -> None:
    reply = exchange(broker, encode_header_only(api_key, version, 4243, b"\x00" * 16))
    if reply:
        assert struct.unpack_from(">i", reply, 4)[0] == 4243, "answer to another correlation id"
    assert_broker_healthy(broker, watchdog)


def test_pipelined_requests_are_answered_in_request_order(broker: Broker) -> None:
    metadata = load_request_schema(API_METADATA, 1)(topics=None)
    versions = load_request_schema(API_API_VERSIONS, 0)()
    frames = [
        encode_request(API_METADATA, 1, metadata, n)
        if n % 2
        else encode_request(API_API_VERSIONS, 0, versions, n)
        for n in range(1, 41)
    ]
    with socket.create_connection(("127.0.0.1", broker.port), timeout=10) as sock:
        sock.sendall(b"".join(frames))
        answered = [struct.unpack_from(">i", recv_frame(sock))[0] for _ in frames]
    assert answered == list(range(1, 41))


def test_produce_with_acks_zero_gets_no_response(broker: Broker, topic: str) -> None:
    with WireClient.to(broker.bootstrap) as wire:
        before = wire.list_offset(topic, 0, LATEST_TIMESTAMP)
        wire.send(produce_request(topic, 0, bytes(build_batch([b"fire and forget"])), acks=0))
        # The next frame on the connection must answer the request sent after the produce.
        assert wire.api_versions(3).error_code.value == 0
        deadline = time.monotonic() + 5
        while wire.list_offset(topic, 0, LATEST_TIMESTAMP) != before + 1:
            assert time.monotonic() < deadline, "the acks=0 produce was not appended"
            time.sleep(0.05)


CRC_BREAKERS = {
    "crc-field": 18,
    "last-offset-delta": 26,
    "base-timestamp": 30,
    "records-count": 60,
    "last-record-byte": -1,
}


@pytest.mark.parametrize("where", sorted(CRC_BREAKERS))
def test_produce_of_batch_failing_crc_gets_corrupt_message_and_appends_nothing(
    broker: Broker, watchdog: WireClient, topic: str, where: str
) -> None:
    batch = build_batch([b"first", b"second", b"third"])
    batch[CRC_BREAKERS[where]] ^= 0x01
    with WireClient.to(broker.bootstrap) as wire:
        before = wire.list_offset(topic, 0, LATEST_TIMESTAMP)
        answer = wire.produce(topic, 0, bytes(batch))
        assert answer.error_code.value == CORRUPT_MESSAGE, answer
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == before
        assert not wire.fetch(topic, 0, before).records
        good = wire.produce(topic, 0, bytes(build_batch([b"good"])))
        assert (good.error_code.value, good.base_offset) == (0, before)
    assert_broker_healthy(broker, watchdog)


@pytest.mark.slow
@settings(FUZZ_SETTINGS, max_examples=150)
@given(data=st.data())
def test_any_corruption_of_a_produced_batch_is_refused_and_appends_nothing(
    broker: Broker, topic: str, data: st.DataObject
) -> None:
    """One to three bytes changed anywhere from batchLength on (baseOffset and
    partitionLeaderEpoch are the broker's to overwrite) are refused; changes
    only to the CRC or the bytes it covers (but the attributes) get CORRUPT_MESSAGE;
    nothing is appended."""
    batch = build_batch([b"alpha", b"", b"gamma" * 20])
    touched = data.draw(
        st.lists(
            st.integers(8, len(batch) - 1).filter(lambda i: not 12 <= i < 16),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    for index in touched:
        batch[index] ^= data.draw(st.integers(1, 255))
    with WireClient.to(broker.bootstrap) as wire:
        before = wire.list_offset(topic, 0, LATEST_TIMESTAMP)
        answer = wire.produce(topic, 0, bytes(batch))
        assert answer.error_code.value != 0, f"corrupted batch accepted (bytes {touched})"
        # Kafka checks the attributes (codec, transactional bit) before the CRC, so
        # only changes elsewhere in the CRC-covered bytes must say CORRUPT_MESSAGE.
        if all(17 <= index < 21 or index >= 23 for index in touched):
            assert answer.error_code.value == CORRUPT_MESSAGE, answer
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == before
