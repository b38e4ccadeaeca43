"""Group members as processes (group_consumer.py) and what they report, for the consumer
group tests: each member can be closed or SIGKILLed, and the tests read the partitions it
owns, the records it consumed and when, and the offsets it committed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import confluent_kafka
from broker_process import Broker, unique_name
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

# a short initial delay keeps joins fast; members' sessions are 6 s (group_consumer.py for
# the classic protocol, the broker's group.consumer.* for the consumer protocol)
GROUP_SETTINGS = {
    "group.initial.rebalance.delay.ms": "200",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.heartbeat.interval.ms": "500",
}
WAIT_S = 20.0
RUNNER = Path(__file__).with_name("group_consumer.py")


class Member:
    """One group_consumer.py process and everything it reported."""

    def __init__(self, args: list[str], log_path: Path, client_id: str) -> None:
        self.client_id = client_id
        self.log_path = log_path
        self._log = log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(RUNNER), *args],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self.member_id = ""
        self.partitions: list[int] = []
        self.values: list[str] = []
        self.committed: dict[int, int] = {}
        self.assignments = 0  # how many different assignments it reported
        self.arrivals: list[tuple[float, int]] = []  # (monotonic time, partition) per record
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            event = json.loads(line)
            with self._lock:
                if event["event"] == "assigned":
                    self.member_id, self.partitions = event["member_id"], event["partitions"]
                    self.assignments += 1
                elif event["event"] == "records":
                    self.values += [value for _, _, value in event["records"]]
                    now = time.monotonic()
                    self.arrivals += [(now, partition) for partition, _, _ in event["records"]]
                elif event["event"] == "committed":
                    self.committed.update(dict(event["offsets"]))

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def snapshot(self) -> tuple[str, list[int], list[str], dict[int, int]]:
        with self._lock:
            return self.member_id, list(self.partitions), list(self.values), dict(self.committed)

    def records_read(self) -> int:
        """Every delivery so far, redeliveries counted."""
        with self._lock:
            return len(self.values)

    def snapshot_arrivals(self) -> list[tuple[float, int]]:
        with self._lock:
            return list(self.arrivals)

    def close(self) -> None:
        """SIGTERM: the client closes and leaves the group."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(15)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(5)

    def dispose(self) -> None:
        if self.alive:
            self.kill()
        self._log.close()


MemberFactory = Callable[..., Member]


def started_members(tmp_path: Path) -> Iterator[MemberFactory]:
    """Yields a factory of group members; all are killed when it resumes."""
    members: list[Member] = []

    def start(
        client: str,
        bootstrap: str,
        topic: str,
        group: str,
        max_records: int | None = None,
        instance_id: str | None = None,
        debug: str | None = None,
    ) -> Member:
        client_id = f"{client}-{len(members)}"
        args = [client, bootstrap, topic, group, client_id]
        if max_records is not None:
            args += ["--max-records", str(max_records)]
        if instance_id is not None:
            args += ["--instance-id", instance_id]
        if debug is not None:
            args += ["--debug", debug]
        member = Member(args, tmp_path / f"{client_id}.log", client_id)
        members.append(member)
        return member

    yield start
    for member in members:
        member.dispose()


def wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(0.05)


def create_topic(broker: Broker, partitions: int) -> str:
    name = unique_name("groups")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(15)
    return name


def produce(
    bootstrap: str, topic: str, label: str, per_partition: int, partitions: int
) -> set[str]:
    """``per_partition`` records on every partition; returns their values."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    values = set()
    for index in range(per_partition * partitions):
        value = f"{label}-{index}"
        producer.produce(topic, value=value.encode(), partition=index % partitions)
        values.add(value)
    assert producer.flush(15) == 0
    return values


def seen(members: list[Member]) -> Counter[str]:
    return Counter(value for member in members for value in member.snapshot()[2])


def shares_out(members: list[Member], partitions: int, busy: int | None = None) -> bool:
    """Every partition is owned by exactly one live member (and ``busy`` members own some,
    evenly: the consumer protocol reaches its target in steps, and a step can share the
    partitions out unevenly on the way)."""
    owned = [member.snapshot()[1] for member in members if member.alive]
    flat = [partition for partition_list in owned for partition in partition_list]
    if sorted(flat) != list(range(partitions)):
        return False
    counts = [len(partition_list) for partition_list in owned if partition_list]
    return busy is None or (len(counts) == busy and max(counts) - min(counts) <= 1)
