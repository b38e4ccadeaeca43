"""Share group consumers as processes (share_consumer.py) and what they report, for the
share group tests: each can be closed or SIGKILLed, and the tests read the records it got
with their delivery counts."""

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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import confluent_kafka
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

RUNNER = Path(__file__).with_name("share_consumer.py")
# quick locks and a low delivery limit, so that expiry and archiving show within seconds
SHARE_SETTINGS = {
    "group.share.min.record.lock.duration.ms": "1000",
    "group.share.record.lock.duration.ms": "3000",
    "group.share.delivery.count.limit": "3",
}
LOCK_S = 3.0
DELIVERY_LIMIT = 3
Delivery = tuple[int, int, str, int]  # partition, offset, value, delivery count (-1: unknown)


class ShareMember:
    """One share_consumer.py process and every record it reported."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self._log = log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(RUNNER), *args],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._deliveries: list[Delivery] = []
        self.subscribed = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            event = json.loads(line)
            if event["event"] == "subscribed":
                self.subscribed.set()
            elif event["event"] == "records":
                with self._lock:
                    self._deliveries += [tuple(item) for item in event["records"]]

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def deliveries(self) -> list[Delivery]:
        with self._lock:
            return list(self._deliveries)

    def values(self) -> list[str]:
        return [value for _, _, value, _ in self.deliveries()]

    def close(self) -> None:
        """SIGTERM: the client acknowledges what it did, closes its share sessions and
        leaves the group."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(30)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(5)

    def pause(self) -> None:
        """SIGSTOP: it holds its connections open and answers nothing (a hung consumer)."""
        os.killpg(self.process.pid, signal.SIGSTOP)

    def dispose(self) -> None:
        if self.alive:
            self.kill()
        self._log.close()


ShareMemberFactory = Callable[..., ShareMember]


def started_share_members(tmp_path: Path) -> Iterator[ShareMemberFactory]:
    """Yields a factory of share consumers; all are killed when it resumes."""
    members: list[ShareMember] = []

    def start(client: str, bootstrap: str, topic: str, group: str, *options: str) -> ShareMember:
        client_id = f"{client}-{len(members)}"
        member = ShareMember(
            [client, bootstrap, topic, group, client_id, *options], tmp_path / f"{client_id}.log"
        )
        members.append(member)
        return member

    yield start
    for member in members:
        member.dispose()


def set_group_configs(bootstrap: str, group: str, configs: dict[str, str]) -> None:
    """Set group configs as Kafka's tools do (IncrementalAlterConfigs on the group)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = [
        ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
        for name, value in configs.items()
    ]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(15)


def start_at_earliest(bootstrap: str, group: str) -> None:
    """The group's ``share.auto.offset.reset=earliest``, so records produced before its
    consumers fetch are delivered too."""
    set_group_configs(bootstrap, group, {"share.auto.offset.reset": "earliest"})


def produce_one_by_one(
    bootstrap: str, topic: str, values: Iterable[str], pace_s: float = 0.0
) -> list[str]:
    """Each record its own batch (``pace_s`` apart), so that share consumers can take
    turns on them."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    sent = []
    for value in values:
        producer.produce(topic, value=value.encode())
        producer.flush(15)
        sent.append(value)
        time.sleep(pace_s)
    return sent


def delivered(members: Iterable[ShareMember]) -> Counter[str]:
    """How often each value was delivered, over all ``members``."""
    return Counter(value for member in members for value in member.values())
