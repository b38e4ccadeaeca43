"""Durability under crashes (issue 2, "What it must show" point 2).

(a) Producer processes load the broker while it is killed with SIGKILL at
random moments and restarted on the same data dir. Afterwards the checker
reads every partition from the beginning and proves, from the producers' own
delivery reports:

- every partition's offsets are contiguous from 0 to the high watermark;
- every acknowledged record is stored at exactly the offset its delivery
  report gave (so it is present, and where the producer was told);
- idempotent producers (acks=all): no record appears twice, acknowledged or
  not, and each producer's records are in sequence order per partition:
  exactly once, in order (where the stored batches are read, a copy librdkafka
  resent under a bumped epoch is told apart: ``resent_under_a_new_epoch``);
- non-idempotent producers (acks=1 and acks=all, one request in flight):
  retries after a crash may duplicate a record (at least once), but the first
  occurrences are in sequence order per partition.

A killed process loses nothing it wrote (the page cache survives), so an
acknowledged record may never go missing, whatever the flush policy.

(b) A torn write: the last batch of the last segment is cut short while the
broker is down after a SIGKILL; on restart the broker serves every batch
before it and appends new records at the next contiguous offset.

(c) Idempotent producer state (duplicates answered with their original
offset, gaps refused) survives a clean and an unclean restart.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import confluent_kafka
import pytest
from broker_process import BrokerFactory, terminate_all, unique_name
from kafka_clients import BEGINNING, ConfluentClient
from kafka_wire import LATEST_TIMESTAMP, WireClient, build_batch, parse_batches
from replica_logs import BatchProducer

PARTITIONS = 3
PRODUCERS = {"idem-a": "idempotent", "idem-b": "idempotent", "acks1": "acks1", "acksall": "acksall"}
KILL_ROUNDS = 3
IDLE_READ_S = 60  # read_partitions gives up after this long without a record
PRODUCER_SCRIPT = Path(__file__).with_name("durability_producer.py")


@dataclass
class ProducerReport:
    """What one producer process was told by the broker."""

    name: str
    mode: str
    acked: dict[int, tuple[int, int]] = field(default_factory=dict)  # sequence -> (p, offset)
    nacked: dict[int, str] = field(default_factory=dict)
    end_line: str = ""
    fatal: list[str] = field(default_factory=list)


def read_report(path: Path, name: str, mode: str) -> ProducerReport:
    report = ProducerReport(name, mode)
    for line in path.read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "ACK":
            sequence, partition, offset = map(int, rest.split())
            report.acked[sequence] = (partition, offset)
        elif kind == "NACK":
            sequence_text, _, error = rest.partition(" ")
            report.nacked[int(sequence_text)] = error
        elif kind == "END":
            report.end_line = rest
        elif kind == "FATAL":
            report.fatal.append(rest)
    return report


def count_acks(path: Path) -> int:
    try:
        return path.read_text().count("ACK ") - path.read_text().count("NACK ")
    except FileNotFoundError:
        return 0


def read_partitions(
    bootstrap: str, topic: str, partitions: int, client_config: Mapping[str, str] | None = None
) -> dict[int, list[tuple[int, bytes]]]:
    """Every (offset, value) of every partition, read up to the high watermark;
    ``client_config`` adds client settings (TLS, SASL)."""
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("durability-check"),
            "enable.auto.commit": False,
            "fetch.max.bytes": 8 << 20,
            **(client_config or {}),
        }
    )
    try:
        ends = {
            p: consumer.get_watermark_offsets(
                confluent_kafka.TopicPartition(topic, p), timeout=10, cached=False
            )
            for p in range(partitions)
        }
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        out: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        wanted = sum(high for _, high in ends.values())
        # an idle limit, not a total one: a long soak's topic holds millions of records
        deadline = time.monotonic() + IDLE_READ_S
        while sum(map(len, out.values())) < wanted and time.monotonic() < deadline:
            batch = consumer.consume(num_messages=10000, timeout=0.5)
            if batch:
                deadline = time.monotonic() + IDLE_READ_S
            for msg in batch:
                assert msg.error() is None, msg.error()
                partition, offset, value = msg.partition(), msg.offset(), msg.value()
                assert partition is not None and offset is not None and value is not None
                out[partition].append((offset, value))
        for p, (low, high) in ends.items():
            assert low == 0, f"partition {p} log start offset {low}, expected 0"
            assert len(out[p]) == high, f"partition {p}: read {len(out[p])} of {high}"
        return out
    finally:
        consumer.close()


def check_durability(
    stored: dict[int, list[tuple[int, bytes]]],
    reports: list[ProducerReport],
    batch_of: Callable[[int, int], BatchProducer] | None = None,
) -> None:
    """The properties listed in the module docstring. ``batch_of(partition, offset)``, where
    the stored batches can be read, tells apart the one duplicate an idempotent producer
    may leave that is the client's doing (``resent_under_a_new_epoch``)."""
    where: dict[tuple[int, int], tuple[str, int]] = {}
    occurrences: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for partition, records in stored.items():
        offsets = [offset for offset, _ in records]
        assert offsets == list(range(len(records))), (
            f"partition {partition}: offsets not contiguous"
        )
        for offset, value in records:
            name, sequence, _ = value.split(b":", 2)
            record = (name.decode(), int(sequence))
            where[(partition, offset)] = record
            occurrences[record].append((partition, offset))

    for report in reports:
        assert not report.fatal, f"{report.name}: fatal producer errors {report.fatal}"
        assert report.acked, f"{report.name}: no record was acknowledged"
        misplaced = {
            sequence: (at, where.get(at))
            for sequence, at in report.acked.items()
            if where.get(at) != (report.name, sequence)
        }
        assert not misplaced, (
            f"{report.name}: {len(misplaced)} of {len(report.acked)} acknowledged records are "
            f"not at their acknowledged offset; first: {sorted(misplaced.items())[:5]}"
        )
        mine = {seq: places for (name, seq), places in occurrences.items() if name == report.name}
        if report.mode == "idempotent":
            duplicated = {
                seq: places
                for seq, places in mine.items()
                if len(places) > 1
                and (batch_of is None or not resent_under_a_new_epoch(places, batch_of))
            }
            assert not duplicated, f"{report.name}: duplicates {sorted(duplicated.items())[:5]}"
        for partition in stored:
            first_seen = sorted(
                (min(o for p, o in places if p == partition), seq)
                for seq, places in mine.items()
                if any(p == partition for p, _ in places)
            )
            sequences = [seq for _, seq in first_seen]
            assert sequences == sorted(sequences), (
                f"{report.name}: partition {partition} records out of sequence order"
            )


def resent_under_a_new_epoch(
    places: list[tuple[int, int]], batch_of: Callable[[int, int], BatchProducer]
) -> bool:
    """Whether every later copy of a record came in the first batch (base sequence 0) of a
    later epoch of the same producer id. librdkafka (2.x, librdkafka#4953) bumps the epoch
    of an idempotent producer after OUT_OF_ORDER_SEQUENCE_NUMBER and resends what it still
    holds under it, including a batch that was stored though its response was an error:
    no broker, Kafka's included, can recognise that copy. A copy under the same epoch is
    the broker's failure and stays one."""
    writers = [batch_of(partition, offset) for partition, offset in sorted(places)]
    return all(
        later.producer_id == earlier.producer_id
        and later.epoch > earlier.epoch
        and later.base_sequence == 0
        for earlier, later in itertools.pairwise(writers)
    )


@pytest.fixture
def producer_processes(
    tmp_path: Path,
) -> Iterator[Callable[[str, str], list[subprocess.Popen[bytes]]]]:
    """Starts the load producers; they are stopped (SIGTERM, then SIGKILL) at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def start(bootstrap: str, topic: str) -> list[subprocess.Popen[bytes]]:
        for name, mode in PRODUCERS.items():
            log = (tmp_path / f"{name}.log").open("wb")
            started.append(
                subprocess.Popen(
                    [
                        sys.executable, str(PRODUCER_SCRIPT), "--bootstrap", bootstrap,
                        "--topic", topic, "--partitions", str(PARTITIONS), "--name", name,
                        "--mode", mode, "--report", str(tmp_path / f"{name}.report"),
                        "--rate", "1500",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )  # fmt: skip
            log.close()
        return started

    yield start
    terminate_all(started, 15)


@pytest.mark.slow
def test_acknowledged_records_survive_sigkill_during_multi_producer_load(
    broker_factory: BrokerFactory,
    producer_processes: Callable[[str, str], list[subprocess.Popen[bytes]]],
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("ODRADEK_TEST_SEED", time.time_ns() % 1_000_000))
    print(f"random seed {seed} (set ODRADEK_TEST_SEED to repeat)")
    rng = random.Random(seed)
    broker = broker_factory(settings={"num.partitions": str(PARTITIONS)})
    topic = unique_name("durability")
    with WireClient.to(broker.bootstrap) as wire:
        assert len(wire.wait_for_topic(topic, auto_create=True).partitions) == PARTITIONS

    processes = producer_processes(broker.bootstrap, topic)
    report_paths = [tmp_path / f"{name}.report" for name in PRODUCERS]
    time.sleep(1.0)
    acks_before_kill: list[int] = []
    for round_number in range(KILL_ROUNDS):
        time.sleep(rng.uniform(0.5, 2.5))
        acks_before_kill.append(sum(map(count_acks, report_paths)))
        broker.kill()
        print(f"round {round_number}: killed broker after {acks_before_kill[-1]} acks")
        time.sleep(rng.uniform(0.0, 0.5))
        broker.start()
    acks_at_last_restart = [count_acks(path) for path in report_paths]
    time.sleep(2.0)

    for process in processes:
        process.send_signal(signal.SIGTERM)
    exit_codes = [process.wait(90) for process in processes]
    reports = [
        read_report(path, name, mode)
        for path, (name, mode) in zip(report_paths, PRODUCERS.items(), strict=True)
    ]
    logs = {name: (tmp_path / f"{name}.log").read_text()[-2000:] for name in PRODUCERS}
    assert exit_codes == [0] * len(PRODUCERS), (exit_codes, [r.fatal for r in reports], logs)
    assert acks_before_kill[0] > 0, "the first kill came before any load was acknowledged"
    for report, before in zip(reports, acks_at_last_restart, strict=True):
        assert len(report.acked) > before, f"{report.name}: no progress after the last restart"

    stored = read_partitions(broker.bootstrap, topic, PARTITIONS)
    print({r.name: (len(r.acked), len(r.nacked), r.end_line) for r in reports})
    check_durability(stored, reports)


# -- (b) torn tail -----------------------------------------------------------------------------

BATCHES = 10
RECORDS_PER_BATCH = 5


def batch_values(batch: int) -> list[bytes]:
    return [f"batch {batch} record {i}".encode() for i in range(RECORDS_PER_BATCH)]


def last_segment(data_dir: Path, topic: str) -> Path:
    segments = sorted((data_dir / f"{topic}-0").glob("*.log"), key=lambda p: int(p.stem))
    assert segments, f"no .log segment under {data_dir / f'{topic}-0'}"
    return segments[-1]


CUTS: dict[str, Callable[[int], int]] = {
    "inside-offset-and-length": lambda size: 7,
    "inside-batch-header": lambda size: 30,
    "inside-records": lambda size: size // 2 + 31,
    "one-byte-short": lambda size: size - 1,
}


@pytest.mark.slow
@pytest.mark.parametrize("cut", sorted(CUTS))
def test_restart_after_torn_last_batch_serves_whole_batches_and_appends_contiguously(
    broker_factory: BrokerFactory, cut: str
) -> None:
    broker = broker_factory()
    topic = unique_name("torn-tail")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(topic, auto_create=True)
        for batch in range(BATCHES):
            answer = wire.produce(topic, 0, bytes(build_batch(batch_values(batch))))
            assert (answer.error_code.value, answer.base_offset) == (0, batch * RECORDS_PER_BATCH)
    # An unclean stop: a torn write only happens in a crash, and a clean-shutdown
    # marker would rightly let the broker skip recovery.
    broker.kill()

    segment = last_segment(broker.data_dir, topic)
    data = segment.read_bytes()
    stored, spanned = parse_batches(data)
    assert spanned == len(data), "segment holds bytes that are not whole batches"
    assert [b.base_offset for b in stored][-3:] == [
        (BATCHES - n) * RECORDS_PER_BATCH for n in (3, 2, 1)
    ], "stored batches do not carry their assigned base offsets"
    torn = stored[-1]
    with segment.open("r+b") as handle:
        handle.truncate(torn.position + CUTS[cut](torn.size))

    broker.start()
    kept = torn.base_offset
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == kept
        fetched, _ = parse_batches(bytes(wire.fetch(topic, 0, 0, max_bytes=1 << 20).records or b""))
        assert [b.base_offset for b in fetched] == list(range(0, kept, RECORDS_PER_BATCH))
        answer = wire.produce(topic, 0, bytes(build_batch([b"after recovery"])))
        assert (answer.error_code.value, answer.base_offset) == (0, kept)

    consumed = ConfluentClient().consume(broker.bootstrap, topic, 0, BEGINNING, kept + 1)
    expected = [v for batch in range(kept // RECORDS_PER_BATCH) for v in batch_values(batch)]
    assert [r.offset for r in consumed] == list(range(kept + 1))
    assert [r.value for r in consumed] == [*expected, b"after recovery"]


# -- (c) idempotent producer state -------------------------------------------------------------

OUT_OF_ORDER_SEQUENCE_NUMBER = 45


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_idempotent_producer_state_survives_restart(
    broker_factory: BrokerFactory, stop: str
) -> None:
    """Retried batches are recognised as duplicates (answered with their original offset,
    not appended) and sequence gaps are refused, before and after a restart."""
    broker = broker_factory()
    topic = unique_name("producer-state")

    def batch(sequence: int, count: int) -> bytes:
        values = [f"seq {sequence + i}".encode() for i in range(count)]
        return bytes(build_batch(values, producer=(producer_id, epoch, sequence)))

    def produce(wire: WireClient, sequence: int, count: int) -> tuple[int, int]:
        answer = wire.produce(topic, 0, batch(sequence, count))
        return answer.error_code.value, answer.base_offset

    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(topic, auto_create=True)
        producer_id, epoch = wire.init_producer_id()
        assert produce(wire, 0, 3) == (0, 0)
        assert produce(wire, 3, 2) == (0, 3)
        assert produce(wire, 3, 2) == (0, 3), "a retried batch must get its original offset"
        assert produce(wire, 10, 1)[0] == OUT_OF_ORDER_SEQUENCE_NUMBER
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == 5

    broker.restart(clean=stop == "sigterm")
    with WireClient.to(broker.bootstrap) as wire:
        assert produce(wire, 3, 2) == (0, 3), "duplicate not recognised after restart"
        assert produce(wire, 10, 1)[0] == OUT_OF_ORDER_SEQUENCE_NUMBER
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == 5
        assert produce(wire, 5, 4) == (0, 5)
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == 9
    consumed = ConfluentClient().consume(broker.bootstrap, topic, 0, BEGINNING, 9)
    assert [r.value for r in consumed] == [f"seq {n}".encode() for n in range(9)]


# -- the checker itself --------------------------------------------------------------------------


def _stored(*records: tuple[int, str, int]) -> dict[int, list[tuple[int, bytes]]]:
    """Partition -> contiguous (offset, value) from (partition, producer, sequence) triples."""
    out: dict[int, list[tuple[int, bytes]]] = defaultdict(list)
    for partition, name, sequence in records:
        out[partition].append((len(out[partition]), f"{name}:{sequence}:pad".encode()))
    return dict(out)


def _report(mode: str, acked: dict[int, tuple[int, int]]) -> ProducerReport:
    return ProducerReport("p", mode, acked=acked)


CHECKER_CASES = {
    "lost-ack": (_stored((0, "p", 0)), _report("idempotent", {0: (0, 0), 1: (0, 1)})),
    "moved-ack": (_stored((0, "p", 1), (0, "p", 0)), _report("acks1", {0: (0, 0)})),
    "duplicate-idempotent": (
        _stored((0, "p", 0), (0, "p", 0)),
        _report("idempotent", {0: (0, 0)}),
    ),
    "reordered": (
        _stored((0, "p", 0), (0, "p", 2), (0, "p", 1)),
        _report("acks1", {0: (0, 0), 2: (0, 1), 1: (0, 2)}),
    ),
    "offset-gap": (
        {0: [(0, b"p:0:x"), (2, b"p:1:x")]},
        _report("acks1", {0: (0, 0), 1: (0, 2)}),
    ),
}


@pytest.mark.parametrize("case", sorted(CHECKER_CASES))
def test_durability_checker_rejects_violations(case: str) -> None:
    stored, report = CHECKER_CASES[case]
    with pytest.raises(AssertionError):
        check_durability(stored, [report])


def test_durability_checker_accepts_at_least_once_duplicates_without_idempotence() -> None:
    stored = _stored((0, "p", 0), (0, "p", 1), (0, "p", 1), (0, "p", 2))
    check_durability(stored, [_report("acks1", {0: (0, 0), 1: (0, 2), 2: (0, 3)})])


def test_durability_checker_tells_a_copy_resent_under_a_bumped_epoch_from_a_broker_duplicate() -> (
    None
):
    stored = _stored((0, "p", 0), (0, "p", 1), (0, "p", 1), (0, "p", 2))
    report = _report("idempotent", {0: (0, 0), 1: (0, 2), 2: (0, 3)})
    bumped = {0: BatchProducer(7, 0, 0), 1: BatchProducer(7, 0, 1), 2: BatchProducer(7, 1, 0)}
    check_durability(stored, [report], lambda partition, offset: bumped[offset])
    same_epoch = {0: BatchProducer(7, 0, 0), 1: BatchProducer(7, 0, 1), 2: BatchProducer(7, 0, 1)}
    with pytest.raises(AssertionError, match="duplicates"):
        check_durability(stored, [report], lambda partition, offset: same_epoch[offset])
    with pytest.raises(AssertionError, match="duplicates"):
        check_durability(stored, [report])
