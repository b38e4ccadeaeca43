"""Clock faults (issue 21): the broker's wall clock steps +3 h, then -3 h, then back, under load.

The broker runs under libfaketime (``FAKETIME_TIMESTAMP_FILE`` re-read on every call,
the monotonic clock left alone, as a real clock step leaves it); the clients keep the
real clock. While an idempotent acks=all producer and a consumer group run, and a
transaction stays open across the forward step, the checks are:

- every acknowledged record is stored exactly once, in order (``check_durability``);
- the group is joined once: no session expiry, no rebalance after it became stable;
- the open transaction is not timed out by the step and commits;
- no segment is rolled (segment.ms 1 h) or deleted (retention.ms 24 h) by a step;
- each partition's time index and its LogAppendTime timestamps never go back, and no
  timestamp is ahead of the furthest the broker's clock went.
"""

from __future__ import annotations

import json
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from broker_process import BrokerFactory, terminate_all, unique_name
from confluent_kafka import Producer
from group_members import GROUP_SETTINGS
from kafka_wire import WireClient
from replica_logs import batch_producer, stored_batches
from test_durability import check_durability, read_partitions, read_report

HOUR_MS = 3600 * 1000
PARTITIONS = 3
SETTINGS = {
    **GROUP_SETTINGS,
    "num.partitions": str(PARTITIONS),
    "log.message.timestamp.type": "LogAppendTime",
    "log.roll.ms": str(HOUR_MS),
    "log.retention.ms": str(24 * HOUR_MS),
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
}
PHASE_S = 3.0
SLACK_MS = 5000
LOG_APPEND_TIME = 0x08  # batch attribute bit: the timestamps are the broker's
PRODUCER_SCRIPT = Path(__file__).with_name("durability_producer.py")
CONSUMER_SCRIPT = Path(__file__).with_name("group_consumer.py")


def libfaketime() -> Path:
    """The preload library of Debian's ``faketime`` package."""
    found = sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))
    if not found:
        pytest.skip("libfaketime is not installed (apt-get install faketime)")
    return found[0]


class SteppedClock:
    """The offset libfaketime applies to the broker's wall clock, changed at run time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.step("+0")

    def step(self, offset: str) -> None:
        # renamed into place: a reader must never see the file empty or half written
        staged = self.path.with_suffix(".next")
        staged.write_text(offset + "\n")
        staged.replace(self.path)

    def environment(self) -> dict[str, str]:
        return {
            "LD_PRELOAD": str(libfaketime()),
            "FAKETIME_TIMESTAMP_FILE": str(self.path),
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            # On by default with glibc, it makes pthread_cond_timedwait time out early or
            # late: Python's GIL waits with it, and with a second thread busy (a
            # checkpoint, aiohttp's resolver) the broker stalled for seconds at a time.
            "FAKETIME_FORCE_MONOTONIC_FIX": "0",
        }


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
def clients() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The load processes a test starts; stopped (SIGTERM, then SIGKILL) at teardown."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    terminate_all(started, 15)


def spawn(argv: list[str], output: Path) -> subprocess.Popen[bytes]:
    with output.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


def wait_until(condition: Callable[[], object], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def events(path: Path, kind: str) -> list[dict[str, object]]:
    lines = path.read_text().splitlines() if path.exists() else []
    parsed = [json.loads(line) for line in lines if line.startswith("{")]
    return [event for event in parsed if event["event"] == kind]


def time_index(directory: Path) -> list[int]:
    """The timestamps of every .timeindex entry of a partition, in offset order."""
    entry = struct.Struct(">qi")
    stamps: list[int] = []
    for path in sorted(directory.glob("*.timeindex")):
        data = path.read_bytes()
        stamps += [entry.unpack_from(data, at)[0] for at in range(0, len(data), entry.size)]
    return stamps


def batch_times(batches: dict[int, bytes]) -> list[tuple[int, int]]:
    """(attributes, max timestamp) of each stored batch, in offset order."""
    return [
        (struct.unpack_from(">h", data, 21)[0], struct.unpack_from(">q", data, 35)[0])
        for _, data in sorted(batches.items())
    ]


@dataclass
class SteppedRun:
    """What the load saw while the clock stepped: reports, times and consumer events."""

    topic: str
    group: str
    report: Path
    consumed: Path
    started_ms: int = 0
    stepped_back_ms: int = 0


def run_through_steps(
    bootstrap: str, clock: SteppedClock, clients: list[subprocess.Popen[bytes]], workdir: Path
) -> SteppedRun:
    """Load ``bootstrap`` with a producer, a group consumer and a transaction open across
    the +3 h step, through the steps +3 h, -3 h, +0; then stop the load."""
    run = SteppedRun(
        unique_name("clock"),
        unique_name("clock-group"),
        workdir / "producer.report",
        workdir / "consumer.out",
    )
    with WireClient.to(bootstrap) as wire:
        wire.wait_for_topic(run.topic, auto_create=True)
        wire.wait_for_topic(run.topic + "-txn", auto_create=True)
    run.started_ms = wall_ms()
    clients.append(
        spawn(
            [
                sys.executable, str(PRODUCER_SCRIPT), "--bootstrap", bootstrap,
                "--topic", run.topic, "--partitions", str(PARTITIONS), "--name", "p",
                "--mode", "idempotent", "--report", str(run.report), "--rate", "300",
            ],
            workdir / "producer.log",
        )
    )  # fmt: skip
    clients.append(
        spawn(
            [
                sys.executable, str(CONSUMER_SCRIPT), "confluent-kafka", bootstrap,
                run.topic, run.group, "clock-consumer",
            ],
            run.consumed,
        )
    )  # fmt: skip
    wait_until(lambda: events(run.consumed, "records"), "records consumed")
    transactional = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": unique_name("clock-txn"),
            "transaction.timeout.ms": 10_000,
        }
    )
    transactional.init_transactions(30)
    transactional.begin_transaction()
    transactional.produce(run.topic + "-txn", b"across the step")
    assert transactional.flush(30) == 0

    clock.step("+3h")
    time.sleep(PHASE_S)  # 15 rounds of the timed-out transaction check
    transactional.commit_transaction(30)
    clock.step("-3h")
    run.stepped_back_ms = wall_ms()
    time.sleep(PHASE_S)
    clock.step("+0")
    time.sleep(PHASE_S)

    for process in clients:
        process.send_signal(signal.SIGTERM)
    assert [process.wait(30) for process in clients] == [0, 0]
    return run


def check_group_stayed(run: SteppedRun, broker_log: Path) -> None:
    """One member id, one assignment, one stable generation, no session expired."""
    assigned = events(run.consumed, "assigned")  # the first may come before the assignment
    assert len({event["member_id"] for event in assigned}) == 1, assigned
    assert [event["partitions"] for event in assigned if event["partitions"]] == [
        list(range(PARTITIONS))
    ], assigned
    group_lines = [line for line in broker_log.read_text().splitlines() if run.group in line]
    assert not [line for line in group_lines if "expired" in line], group_lines
    assert sum("stable at generation" in line for line in group_lines) == 1, group_lines


def check_partition_files(run: SteppedRun, data_dir: Path) -> None:
    """One segment per partition (nothing rolled or deleted); the time index and the
    LogAppendTime timestamps never go back nor pass the furthest the clock went."""
    furthest_ms = run.stepped_back_ms + 3 * HOUR_MS + SLACK_MS
    for partition in range(PARTITIONS):
        directory = data_dir / f"{run.topic}-{partition}"
        assert [path.name for path in directory.glob("*.log")] == [f"{0:020d}.log"]
        stamps = time_index(directory)
        assert stamps and stamps == sorted(stamps), (partition, stamps)
        times = batch_times(stored_batches(data_dir, run.topic, partition))
        assert all(attributes & LOG_APPEND_TIME for attributes, _ in times)
        appended = [timestamp for _, timestamp in times]
        assert appended == sorted(appended), f"partition {partition}: LogAppendTime went back"
        assert run.started_ms - SLACK_MS <= appended[0] and appended[-1] <= furthest_ms
        assert appended[-1] >= run.started_ms + 3 * HOUR_MS, "the +3 h step never reached it"


def test_wall_clock_steps_expire_roll_delete_and_reorder_nothing(
    broker_factory: BrokerFactory,
    clients: list[subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    clock = SteppedClock(tmp_path / "faketime")
    broker = broker_factory(settings=SETTINGS, env=clock.environment())

    run = run_through_steps(broker.bootstrap, clock, clients, tmp_path)

    stored = read_partitions(broker.bootstrap, run.topic, PARTITIONS)
    broker.stop()
    batches = {p: stored_batches(broker.data_dir, run.topic, p) for p in range(PARTITIONS)}
    check_durability(
        stored,
        [read_report(run.report, "p", "idempotent")],
        lambda partition, offset: batch_producer(batches[partition], offset),
    )
    check_group_stayed(run, broker.log_path)
    check_partition_files(run, broker.data_dir)
