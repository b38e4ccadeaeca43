"""Run real `odradek mirror` processes between test brokers, and read what they mirrored.

``mirror_factory(source, target, **overrides)`` (a fixture; import it into a
test module) writes a mirror.yaml with short intervals and starts a process
that serves /readyz and /metrics on a free port. Every process is killed at
teardown; a failed test shows its log tail.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import pytest
import yaml
from broker_process import Broker, free_port, http_get, metric_sum, odradek_command
from confluent_kafka import Consumer, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

FAST_GROUP_SESSION = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "500"}


def mirror_document(
    source: Broker, target: Broker, /, name: str, **overrides: Any
) -> dict[str, Any]:
    """A mirror.yaml as the operator writes it, with intervals short enough for tests."""
    document: dict[str, Any] = {
        "name": name,
        "source": {
            "alias": "east",
            "bootstrapServers": source.bootstrap,
            "config": FAST_GROUP_SESSION,
        },
        "target": {"alias": "west", "bootstrapServers": target.bootstrap, "config": {}},
        "topics": {"include": [".*"], "exclude": []},
        "groups": {"include": [], "exclude": []},
        "naming": "prefix",
        "offsetSync": {"enabled": True, "intervalSeconds": 1},
        "checkpoints": {"enabled": True, "intervalSeconds": 1, "syncGroupOffsets": False},
        "refreshIntervalSeconds": 1,
        "commitIntervalSeconds": 0.2,
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(document.get(key), dict):
            document[key] = {**document[key], **value}
        else:
            document[key] = value
    return document


class MirrorRunner:
    """One `odradek mirror` subprocess with its config file and log."""

    def __init__(self, workdir: Path, document: Mapping[str, Any]) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.config_path = workdir / "mirror.yaml"
        self.config_path.write_text(yaml.safe_dump(dict(document)))
        self.log_path = workdir / "mirror.log"
        self.http_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, wait: bool = True) -> MirrorRunner:
        argv = [*odradek_command(), "mirror", "--config", str(self.config_path)]
        argv += ["--http-listener", f"127.0.0.1:{self.http_port}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("ODRADEK_")}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        if wait:
            wait_until(self.is_ready, 60, f"mirror ready\n{self.log_tail()}")
        return self

    def is_ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"mirror exited with {self.process.returncode}\n{self.log_tail()}")
        try:
            return http_get(f"http://127.0.0.1:{self.http_port}/readyz", 1.0)[0] == 200
        except OSError:
            return False

    def metrics_text(self) -> str:
        return http_get(f"http://127.0.0.1:{self.http_port}/metrics")[1]

    def metric(self, name: str, **labels: str) -> float:
        """Sum of the samples of ``name`` whose labels include ``labels``."""
        return metric_sum(self.metrics_text(), name, **labels)

    def kill(self) -> None:
        """SIGKILL: no commit, no goodbye to the group."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


class MirrorFactory(Protocol):
    def __call__(
        self, source: Broker, target: Broker, /, name: str = "", **overrides: Any
    ) -> MirrorRunner: ...


@pytest.fixture
def mirror_factory(tmp_path: Path) -> Iterator[MirrorFactory]:
    """Makes mirror processes owned by one test; all are killed afterwards."""
    runners: list[MirrorRunner] = []

    def make(source: Broker, target: Broker, /, name: str = "", **overrides: Any) -> MirrorRunner:
        """A started mirror; processes given the same ``name`` share one group."""
        name = name or f"{tmp_path.name}-{len(runners)}"
        document = mirror_document(source, target, name=name, **overrides)
        runner = MirrorRunner(tmp_path / f"mirror{len(runners)}", document)
        runners.append(runner)
        return runner.start()

    yield make
    for runner in runners:
        runner.kill()
    for runner in runners:  # shown by pytest only when the test failed
        print(f"--- mirror log {runner.workdir}\n{runner.log_tail()}")


@pytest.fixture(scope="module")
def east_and_west(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Broker, Broker]]:
    """Two single-broker clusters shared by a module's tests (each test uses its own topics)."""
    brokers = [Broker(tmp_path_factory.mktemp(side)) for side in ("east", "west")]
    try:
        for broker in brokers:
            broker.start()
        yield brokers[0], brokers[1]
    finally:
        for broker in brokers:
            broker.close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def create_topic(broker: Broker, name: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=configs)
    admin.create_topics([topic])[name].result(30)


def topic_names(broker: Broker) -> set[str]:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    return set(admin.list_topics(timeout=10).topics)


def end_offsets(broker: Broker, topic: str) -> dict[int, int]:
    """Partition -> high watermark; empty when the topic does not exist."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "probe"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error is not None:
            return {}
        return {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
            for p in metadata.partitions
        }
    finally:
        consumer.close()


def record_count(broker: Broker, topic: str) -> int:
    return sum(end_offsets(broker, topic).values())


def read_all(broker: Broker, topic: str) -> list[Message]:
    """Every record of ``topic``, partition by partition in offset order."""
    ends = end_offsets(broker, topic)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "reader", "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
    records: list[Message] = []
    try:
        while len(records) < sum(ends.values()):
            batch = consumer.consume(1000, timeout=10)
            assert batch, f"read {len(records)} of {sum(ends.values())} records of {topic}"
            records.extend(m for m in batch if m.error() is None)
    finally:
        consumer.close()
    return sorted(records, key=lambda m: (m.partition(), m.offset()))


def produce(broker: Broker, topic: str, records: list[dict[str, Any]]) -> None:
    """Produce keyword-argument dicts (key, value, headers, timestamp, partition) and flush."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 5})
    for record in records:
        producer.produce(topic, **record)
    assert producer.flush(30) == 0


def consume_in_group(broker: Broker, group: str, topic: str, at_least: int) -> list[bytes]:
    """Values read by a member of ``group`` until at least ``at_least``; commits and leaves."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **FAST_GROUP_SESSION,
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while len(values) < at_least:
            assert time.monotonic() < deadline, f"read {len(values)} of {at_least} from {topic}"
            values += [m.value() or b"" for m in consumer.consume(50, 1.0) if m.error() is None]
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return values
