"""Many producer connections on one asyncio loop, each speaking the Kafka protocol itself.

A real client per connection cannot hold thousands of connections on one load core
(each librdkafka instance runs several threads, each aiokafka producer a metadata
connection besides). Here a connection is a socket that sends one pre-encoded Produce
request (v8, acks=1, one record, no producer id) at a time and reads its answer, so the
time measured is the broker's, and the client's own CPU is reported beside it. Every
answer is checked: its correlation id, and an error code of NONE.
"""

from __future__ import annotations

import asyncio
import datetime
import io
import random
import struct
import sys
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema
from kio.serial import entity_writer
from kio.static.primitive import i16, i32, i32Timedelta

from odradek.broker.protocol.record_codec import BatchSpec, Record, encode_batch

PRODUCE = 0
PRODUCE_VERSION = 8  # the last version with a fixed-width (non-flexible) response header
API_VERSIONS = 18
CORRELATION_AT = 8  # size int32, api key int16, api version int16, then the correlation id
OPEN_AT_ONCE = 200  # connections being opened concurrently
ANSWER_TIMEOUT_S = 60.0  # twice the Produce timeout the requests carry
_SIZE = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_CLIENT_ID = "connection-scale"


class LoadError(Exception):
    """A connection failed or the broker answered with an error."""


@dataclass(frozen=True)
class Load:
    """What a phase moved: acknowledged requests (one record each), latencies in seconds
    (from when each request was due), wall time and the load generator's own CPU time."""

    acked: int
    latencies: Sequence[float]
    seconds: float
    client_cpu_seconds: float


class ProducerConnection:
    """One connection producing to one partition, one request in flight."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frame: bytes, topic: str
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._frame = bytearray(frame)
        self._correlation_id = 0
        # Produce v8 answer: correlation id, [topic name, [index, error code, ...]]
        self._error_at = 4 + 4 + 2 + len(topic.encode()) + 4 + 4

    async def produce(self) -> None:
        answer = await self._exchange(self._frame)
        (error,) = _INT16.unpack_from(answer, self._error_at)
        if error:
            raise LoadError(f"Produce answered with error code {error}")

    async def check_served(self) -> None:
        """An ApiVersions v0 round trip: the broker serves this connection, not only its
        kernel accepting it."""
        answer = await self._exchange(bytearray(_header_frame(API_VERSIONS, 0, b"")))
        (error,) = _INT16.unpack_from(answer, 4)
        if error:
            raise LoadError(f"ApiVersions answered with error code {error}")

    async def _exchange(self, frame: bytearray) -> bytes:
        self._correlation_id += 1
        _SIZE.pack_into(frame, CORRELATION_AT, self._correlation_id)
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT_S):
                self._writer.write(frame)
                (size,) = _SIZE.unpack(await self._reader.readexactly(4))
                answer = await self._reader.readexactly(size)
            (correlation_id,) = _SIZE.unpack_from(answer, 0)
        except (OSError, EOFError, TimeoutError, struct.error) as error:
            raise LoadError(f"request {self._correlation_id}: {error!r}") from None
        if correlation_id != self._correlation_id:
            raise LoadError(f"answer {correlation_id} to request {self._correlation_id}")
        return answer

    def close(self) -> None:
        self._writer.close()


def produce_frames(topic: str, partitions: int, record_size: int) -> list[bytes]:
    """One Produce request frame per partition, each carrying one record of ``record_size``
    random bytes (stamped now: a benchmark's run is short beside any retention)."""
    now = int(time.time() * 1000)
    value = random.randbytes(record_size)
    batch = encode_batch(BatchSpec(records=(Record(0, now, None, value),)))
    schema: Any = load_request_schema(PRODUCE, PRODUCE_VERSION)  # fields vary by version
    module = sys.modules[schema.__module__]  # its nested entities
    frames = []
    for partition in range(partitions):
        data = module.PartitionProduceData(index=i32(partition), records=batch)
        body = schema(
            transactional_id=None,
            acks=i16(1),
            timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)),
            topic_data=(module.TopicProduceData(name=topic, partition_data=(data,)),),
        )
        encoded = io.BytesIO()
        entity_writer(schema)(encoded, body)
        frames.append(_header_frame(PRODUCE, PRODUCE_VERSION, encoded.getvalue()))
    return frames


def _header_frame(api_key: int, version: int, body: bytes) -> bytes:
    """Size, a v1 request header (correlation id 0, patched per request), ``body``."""
    client_id = _CLIENT_ID.encode()
    header = struct.pack(">hhih", api_key, version, 0, len(client_id)) + client_id
    return _SIZE.pack(len(header) + len(body)) + header + body


async def open_connections(
    host: str,
    port: int,
    count: int,
    frames: Sequence[bytes],
    topic: str,
    opened: list[ProducerConnection],
) -> None:
    """Open ``count`` connections into ``opened`` (the caller closes them, whatever
    happens), the n-th producing to partition n mod len(frames), each served once
    (ApiVersions) before this returns."""
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def open_one(number: int) -> None:
        async with gate:
            try:
                reader, writer = await asyncio.open_connection(host, port)
            except OSError as error:
                raise LoadError(f"connection {number}: {error}") from None
            connection = ProducerConnection(reader, writer, frames[number % len(frames)], topic)
            opened.append(connection)
            await connection.check_served()

    await _all(open_one(number) for number in range(count))


async def paced(connections: Sequence[ProducerConnection], rate: float, seconds: float) -> Load:
    """Each connection sends ``rate`` requests a second, at a random phase, for ``seconds``;
    a latency runs from when its request was due, so a late broker is not hidden by
    requests sent late (no coordinated omission)."""
    interval = 1.0 / rate
    latencies: list[float] = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + seconds

    async def pace(connection: ProducerConnection) -> None:
        due = start + random.uniform(0, interval)
        while due < deadline:
            await asyncio.sleep(due - loop.time())
            await connection.produce()
            latencies.append(loop.time() - due)
            due += interval

    return await _timed(connections, pace, latencies, start)


async def flat_out(connections: Sequence[ProducerConnection], seconds: float) -> Load:
    """Each connection sends its next request as soon as the last is answered; a latency
    is a request's round trip."""
    latencies: list[float] = []
    loop = asyncio.get_running_loop()
    start = loop.time()
    deadline = start + seconds

    async def hurry(connection: ProducerConnection) -> None:
        while (sent := loop.time()) < deadline:
            await connection.produce()
            latencies.append(loop.time() - sent)

    return await _timed(connections, hurry, latencies, start)


async def _timed(
    connections: Sequence[ProducerConnection],
    job: Callable[[ProducerConnection], Coroutine[Any, Any, None]],
    latencies: list[float],
    start: float,
) -> Load:
    cpu_before = time.process_time()
    await _all(job(connection) for connection in connections)
    seconds = asyncio.get_running_loop().time() - start
    return Load(len(latencies), latencies, seconds, time.process_time() - cpu_before)


async def _all(jobs: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run ``jobs`` together; the first to fail stops the others and is raised."""
    try:
        async with asyncio.TaskGroup() as group:
            for job in jobs:
                group.create_task(job)
    except ExceptionGroup as failures:
        raise failures.exceptions[0] from None
