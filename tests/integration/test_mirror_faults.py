"""`odradek mirror` under faults: SIGKILL under load, and a consumer group failing over."""

from __future__ import annotations

import threading
import time

from broker_process import Broker
from confluent_kafka import ConsumerGroupTopicPartitions, Producer
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]
from mirror_harness import (
    MirrorFactory,
    consume_in_group,
    create_topic,
    produce,
    read_all,
    record_count,
    wait_until,
)

from odradek.mirror.internal_topics import read_checkpoints

pytest_plugins = ("mirror_harness",)  # fixtures: east_and_west, mirror_factory

QUEUE_SIZE = 500
COMMIT_DELAY_SLACK_S = 2.0
COMMIT_INTERVAL_S = 0.2


class LoadProducer(threading.Thread):
    """Produces numbered records until stopped; remembers which ones the source acknowledged."""

    def __init__(self, broker: Broker, topic: str, rate: float) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": broker.bootstrap, "acks": "all"})
        self.topic, self.rate = topic, rate
        self.acked: set[bytes] = set()
        self.stopping = threading.Event()

    def run(self) -> None:
        number = 0
        started = time.monotonic()
        while not self.stopping.is_set():
            while number < (time.monotonic() - started) * self.rate:
                value = str(number).encode()
                self.producer.produce(self.topic, value, value, on_delivery=self._delivered(value))
                number += 1
            self.producer.poll(0.01)
        assert self.producer.flush(30) == 0

    def _delivered(self, value: bytes):  # type: ignore[no-untyped-def]
        def report(error: object, message: object) -> None:
            if error is None:
                self.acked.add(value)

        return report


def test_sigkill_under_load_loses_nothing_and_duplicates_stay_within_the_bound(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "load", 6)
    rate = 1000.0
    load = LoadProducer(source, "load", rate)
    load.start()
    mirror = mirror_factory(
        source,
        target,
        topics={"include": ["load"]},
        queueSize=QUEUE_SIZE,
        commitIntervalSeconds=COMMIT_INTERVAL_S,
    )
    kills = 3
    for _ in range(kills):
        # Kill a mirror at work: it has mirrored and committed. One killed before its first
        # commit leaves its whole catch-up to be mirrored again by the next, and the bound
        # below is per kill of a running mirror, not of a chain of unfinished restarts.
        wait_until(
            lambda: (
                mirror.metric("odradek_mirror_records_total") > 500
                and mirror.metric("odradek_mirror_source_commits_total") >= 2
            ),
            60,
            "progress",
        )
        mirror.kill()
        mirror.start()
    time.sleep(1)
    load.stopping.set()
    load.join(30)
    wait_until(lambda: record_count(target, "east.load") >= len(load.acked), 90, "catching up")
    copies: list[bytes | None] = []

    def complete() -> bool:
        copies[:] = [m.value() for m in read_all(target, "east.load")]
        return load.acked <= set(copies)

    wait_until(complete, 60, "every acknowledged source record on the target")
    duplicates = len(copies) - len(set(copies))
    # Per kill: the queue, plus what was mirrored since the last commit. Commits run every
    # COMMIT_INTERVAL_S, but a loaded machine delays them, hence the few seconds of slack.
    bound = kills * (QUEUE_SIZE + rate * (COMMIT_INTERVAL_S + COMMIT_DELAY_SLACK_S))
    print(
        f"{len(load.acked)} records, {kills} SIGKILLs, {duplicates} duplicates (bound {bound:.0f})"
    )
    assert duplicates <= bound


def test_consumer_group_fails_over_to_the_target_with_synced_offsets(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "fo-orders", 3)
    produce(
        source,
        "fo-orders",
        [{"key": str(i % 7).encode(), "value": str(i).encode()} for i in range(300)],
    )
    mirror = mirror_factory(
        source,
        target,
        topics={"include": ["fo-.*"]},
        groups={"include": ["billing"]},
        checkpoints={"intervalSeconds": 1, "syncGroupOffsets": True},
    )
    wait_until(lambda: record_count(target, "east.fo-orders") == 300, 60, "mirrored records")

    on_source = consume_in_group(source, "billing", "fo-orders", at_least=120)
    target_admin = AdminClient({"bootstrap.servers": target.bootstrap})

    def synced() -> int:
        request = [ConsumerGroupTopicPartitions("billing")]
        result = target_admin.list_consumer_group_offsets(request)["billing"].result(10)
        return sum(tp.offset for tp in result.topic_partitions if tp.offset >= 0)

    wait_until(lambda: synced() == len(on_source), 30, "translated offsets in the target group")
    checkpoints = read_checkpoints(
        {"bootstrap.servers": target.bootstrap}, "east.checkpoints.internal", "billing"
    )
    assert sum(checkpoints.values()) == len(on_source)
    assert mirror.metric("odradek_mirror_group_offsets_synced_total") > 0

    on_target = consume_in_group(target, "billing", "east.fo-orders", at_least=300 - len(on_source))
    assert set(on_source) | set(on_target) == {str(i).encode() for i in range(300)}
    re_read = set(on_source) & set(on_target)
    assert not re_read, f"{len(re_read)} records read again after the failover"
