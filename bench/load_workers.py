"""Load generator processes: confluent-kafka producers and consumers, one process per phase.

A worker connects and fetches metadata, says "ready", waits for "go", does
its job and sends back ``("done", payload)``; ``run_phase`` samples the
system's CPU time between "go" and "done", so client start-up is not measured.
"""

from __future__ import annotations

import math
import multiprocessing
import signal
import struct
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from measure import percentile
from proc_stats import total_cpu_seconds

from odradek.cli.produce_command import send_records, synthetic_records
from odradek.cli.progress import Progress

PHASE_TIMEOUT_S = 3600.0
INDEX = struct.Struct(">q")


class BenchError(Exception):
    """A failure to report in one sentence."""


@dataclass(frozen=True)
class ProducerJob:
    """What a producer sends, and how; ``rate`` > 0 paces it (records/s) for latency;
    ``transaction_ms`` > 0 makes it transactional, committing that often; ``keyed`` gives
    each record its number as key, so the partitioner spreads them over every partition
    (keyless, librdkafka fills one partition's batch at a time)."""

    topic: str
    records: int
    record_size: int
    compression: str
    acks: str
    linger_ms: int
    batch_size: int
    rate: float = 0.0
    transaction_ms: int = 0
    keyed: bool = False


@dataclass(frozen=True)
class ConsumerJob:
    """Read ``records`` records of ``topic`` from the beginning of every partition."""

    topic: str
    records: int
    isolation: str = "read_uncommitted"


@dataclass(frozen=True)
class Moved:
    """What a phase moved and in how long; latencies in seconds for paced producers; the
    load generator's own CPU seconds meanwhile (NaN where unknown)."""

    records: int
    size: int
    seconds: float
    latencies: tuple[float, float, float] | None = None
    client_cpu_seconds: float = math.nan


@dataclass(frozen=True)
class PhaseResult:
    moved: Moved
    cpu_seconds: float


class PhaseClock:
    """Wall time and this process's CPU time (all its threads) since the phase began."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self._cpu_start = time.process_time()

    def moved(
        self, progress: Progress, latencies: tuple[float, float, float] | None = None
    ) -> Moved:
        seconds = time.perf_counter() - self.start
        cpu_seconds = time.process_time() - self._cpu_start
        return Moved(progress.records, progress.size, seconds, latencies, cpu_seconds)


JobT = TypeVar("JobT", ProducerJob, ConsumerJob)
Worker = Callable[[Connection, Mapping[str, str], JobT], None]


def run_phase(
    name: str, worker: Worker[JobT], client: Mapping[str, str], job: JobT, pids: tuple[int, ...]
) -> PhaseResult:
    """Run ``worker`` in its own process, connecting with librdkafka's settings ``client``
    (bootstrap.servers and the listener's security); sample the CPU of ``pids`` between
    'go' and 'done'."""
    parent_end, worker_end = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_worker_main, args=(worker, worker_end, dict(client), job), name=f"bench-{name}"
    )
    process.start()
    try:
        _expect(parent_end, process, "ready")
        cpu_before = total_cpu_seconds(pids)
        parent_end.send("go")
        moved: Moved = _expect(parent_end, process, "done")
        cpu_after = total_cpu_seconds(pids)
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    return PhaseResult(moved, cpu_after - cpu_before)


def _worker_main(
    worker: Worker[JobT], connection: Connection, client: Mapping[str, str], job: JobT
) -> None:
    """Entry of a worker process: Ctrl-C is the parent's to handle, errors go back as text."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker(connection, client, job)
    except Exception as error:
        connection.send(("error", f"{type(error).__name__}: {error}"))


def _expect(connection: Connection, process: BaseProcess, tag: str) -> Any:
    """Wait for ``(tag, payload)`` from the worker; a dead worker or an error is a BenchError."""
    deadline = time.monotonic() + PHASE_TIMEOUT_S
    while not connection.poll(1.0):
        if not process.is_alive():
            raise BenchError(f"the {process.name} process died (exit code {process.exitcode})")
        if time.monotonic() > deadline:
            raise BenchError(f"the {process.name} process took over {PHASE_TIMEOUT_S:g} s")
    received_tag, payload = connection.recv()
    if received_tag == "error":
        raise BenchError(f"{process.name}: {payload}")
    assert received_tag == tag, (received_tag, tag)
    return payload


def _producer(client: Mapping[str, str], job: ProducerJob) -> Producer:
    producer = Producer(
        {
            **client,
            "compression.type": job.compression,
            "linger.ms": job.linger_ms,
            "batch.size": job.batch_size,
            "acks": job.acks,
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    producer.list_topics(job.topic, timeout=30)
    return producer


def produce(connection: Connection, client: Mapping[str, str], job: ProducerJob) -> None:
    """Worker: send ``job.records`` synthetic records as fast as possible, wait for every ack."""
    producer = _producer(client, job)
    failures: list[str] = []

    def delivered(error: Any, message: Any) -> None:
        if error is None:
            progress.add(1, len(message))
        else:
            failures.append(str(error))

    records = synthetic_records(job.records, job.record_size)
    if job.keyed:
        records = ((b"%d" % number, value) for number, (_, value) in enumerate(records))
    connection.send(("ready", None))
    connection.recv()
    progress = Progress("produced", total=job.records)
    clock = PhaseClock()
    send_records(producer, job.topic, records, on_delivery=delivered)
    producer.flush()
    moved = clock.moved(progress)
    if failures:
        raise BenchError(f"{len(failures)} records failed, first: {failures[0]}")
    connection.send(("done", moved))


def produce_transactional(
    connection: Connection, client: Mapping[str, str], job: ProducerJob
) -> None:
    """Worker: send ``job.records`` as fast as possible in transactions, committing one
    every ``job.transaction_ms`` (and the last at the end); acks are the commits."""
    producer = _producer({**client, "transactional.id": f"bench-{uuid.uuid4()}"}, job)
    producer.init_transactions(30)
    records = synthetic_records(job.records, job.record_size)
    connection.send(("ready", None))
    connection.recv()
    progress = Progress("produced (transactions)", total=job.records)
    clock = PhaseClock()
    period = job.transaction_ms / 1000
    commit_at = time.monotonic() + period
    producer.begin_transaction()
    for _, value in records:
        while True:
            try:
                producer.produce(job.topic, value)
                break
            except BufferError:
                producer.poll(0.01)
        progress.add(1, len(value))
        if time.monotonic() >= commit_at:
            producer.commit_transaction(60)
            producer.begin_transaction()
            commit_at = time.monotonic() + period
    producer.commit_transaction(60)
    connection.send(("done", clock.moved(progress)))


def produce_paced(connection: Connection, client: Mapping[str, str], job: ProducerJob) -> None:
    """Worker: send at ``job.rate`` records/s; latency of each record from its intended send time.

    Record i is due at start + i / rate. Whatever is due is sent at once, so a
    stalled producer or broker shows up in the latency of every record it delayed
    (no coordinated omission). The record's index travels in its key.
    """
    producer = _producer(client, job)
    values = [value for _, value in synthetic_records(min(job.records, 65_536), job.record_size)]
    latencies: list[float] = []
    failures: list[str] = []
    interval = 1.0 / job.rate

    def delivered(error: Any, message: Any) -> None:
        if error is None:
            (index,) = INDEX.unpack(message.key())
            latencies.append(time.perf_counter() - (start + index * interval))
        else:
            failures.append(str(error))

    connection.send(("ready", None))
    connection.recv()
    progress = Progress("produced (paced)", total=job.records)
    clock = PhaseClock()
    start = clock.start
    sent = 0
    while sent < job.records:
        due = min(job.records, int((time.perf_counter() - start) * job.rate) + 1)
        while sent < due:
            value = values[sent % len(values)]
            try:
                producer.produce(job.topic, value, INDEX.pack(sent), on_delivery=delivered)
            except BufferError:
                break
            progress.add(1, len(value))
            sent += 1
        producer.poll(max(0.0, start + sent * interval - time.perf_counter()))
    producer.flush()
    if failures:
        raise BenchError(f"{len(failures)} records failed, first: {failures[0]}")
    quantiles = (
        percentile(latencies, 0.5),
        percentile(latencies, 0.99),
        percentile(latencies, 0.999),
    )
    connection.send(("done", clock.moved(progress, quantiles)))


def consume(connection: Connection, client: Mapping[str, str], job: ConsumerJob) -> None:
    """Worker: read every partition from the beginning until ``job.records`` records arrived."""
    consumer = Consumer(
        {
            **client,
            "group.id": "odradek-bench",  # required by librdkafka; partitions are assigned
            "enable.auto.commit": False,
            "fetch.max.bytes": 64 * 1024 * 1024,
            "max.partition.fetch.bytes": 16 * 1024 * 1024,
            "isolation.level": job.isolation,
        }
    )
    metadata = consumer.list_topics(job.topic, timeout=30)
    partitions = sorted(metadata.topics[job.topic].partitions)
    connection.send(("ready", None))
    connection.recv()
    progress = Progress("consumed", total=job.records)
    clock = PhaseClock()
    consumer.assign([TopicPartition(job.topic, number, OFFSET_BEGINNING) for number in partitions])
    while progress.records < job.records:
        for message in consumer.consume(10_000, 1.0):
            error = message.error()
            if error is not None:
                raise BenchError(str(error))
            progress.add(1, len(message))
    moved = clock.moved(progress)
    consumer.close()
    connection.send(("done", moved))
