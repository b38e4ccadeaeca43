"""Long soak (issue 21, point 5): every fault kind at once, for as long as ``ODRADEK_SOAK`` says.

Three brokers on a 3-member etcd carry an RF=3, min.insync.replicas=2 topic loaded by
idempotent acks=all producer processes, read by a consumer group that commits after every
batch, and mirrored exactly once to a one-broker target. Broker 0's only log dir is a tmpfs
sized for the whole run, broker 1 runs under libfaketime, broker 2 reaches etcd through
proxies it can be cut from. The nemesis (soak_nemesis.py) draws faults from a seeded
random schedule: SIGKILL of a leader or the controller, SIGSTOP of a leader past the
session timeout, broker 2 cut off from etcd, an etcd member killed, paused or cut off from
its peers, etcd's quorum lost, broker 0's disk full, broker 1's clock stepped. Between
faults the consumer group must keep reading (``GroupProgress``).

``ODRADEK_SOAK`` sets the length: a duration (``120m``, ``2h``, ``90s``) or a number of
faults (``1000``); unset, one round of every kind. ``ODRADEK_SOAK_SEED`` repeats a schedule;
``ODRADEK_SOAK_KINDS`` (comma-separated names of soak_nemesis.FAULT_KINDS) draws only those
kinds; ``ODRADEK_SOAK_CLIENT_DEBUG`` sets the group member's librdkafka debug contexts
(``cgrp,broker`` by default). At the end the report (faults per kind; records acknowledged, lost,
duplicated, and resent by librdkafka under a new epoch, a copy no broker can tell, see
test_durability.resent_under_a_new_epoch; the consumer group's and the mirror's totals;
each broker's memory and file descriptors over time) is printed and written as JSON to
the test's tmp dir and to ``ODRADEK_SOAK_REPORT`` if set; then nothing acknowledged may be
lost or stored twice (``check_durability``), the group and the target must hold every
acknowledged record, the target exactly the source's records, and no broker's memory may
have more than doubled past ``LEAK_FLOOR_BYTES``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import statistics
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from broker_process import Broker, unique_name
from cluster_harness import Cluster
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from disk_faults import small_filesystem
from group_members import GROUP_SETTINGS, Member, seen, started_members
from mirror_harness import MirrorRunner, mirror_document
from replica_logs import batch_producers
from soak_nemesis import (
    CLOCK_BROKER,
    CUT_OFF_BROKER,
    DISK_FULL_BROKER,
    Injected,
    Sample,
    Target,
    chosen_kinds,
    run_nemesis,
)
from tcp_proxy import TcpProxy, proxy_to
from test_clock_faults import SteppedClock
from test_cluster_failover import (
    PARTITIONS,
    PRODUCERS,
    RATE_PER_PRODUCER,
    TOPIC_CONFIGS,
    producer_processes,
    read_producer_report,
)
from test_disk_faults import stop_all
from test_durability import read_partitions, resent_under_a_new_epoch
from test_etcd_faults import (
    ETCD_UIDS,
    Load,
    check_load,
    etcd_with_the_lease_fix,
    firewall,
    members_directory,
)
from test_transactions import read_committed

from odradek.cli.etcd_process import EtcdCluster

KINDS = chosen_kinds(os.environ.get("ODRADEK_SOAK_KINDS", ""))
CLIENT_DEBUG = os.environ.get("ODRADEK_SOAK_CLIENT_DEBUG", "cgrp,broker")
UNITS = {"s": 1, "m": 60, "h": 3600}
SECONDS_PER_FAULT = 10  # 7.5 to 9 s on two cores: sizes the disk and timeout of a counted run
SETUP_AND_CHECKS_S = 600
RECORD_BYTES = 200  # a stored record with its share of batch header and index (about 140)
DISK_SLACK_BYTES = 256 << 20
CATCH_UP_S = 120
GROUP_LAG_S = 60  # the group reads what was acknowledged before the last fault within this
LEAK_FACTOR = 2
LEAK_FLOOR_BYTES = 1 << 30
HOUR_MS = 3600 * 1000
TOPIC_SETTINGS = {
    **TOPIC_CONFIGS,
    # Restarts recover only the segments after the recovery point.
    "segment.bytes": str(16 << 20),
    # Broker 1's clock goes 3 h back: the clients' CreateTime must not look too far ahead.
    "message.timestamp.after.max.ms": str(4 * HOUR_MS),
}
CLUSTER_SETTINGS = {
    **GROUP_SETTINGS,
    # Preferred leaders are elected between faults (soak_nemesis.preferred_leaders), never
    # during one: there a periodic election would pass for a leadership the fault moved.
    "auto.leader.rebalance.enable": "false",
}
REPORT_ENV = "ODRADEK_SOAK_REPORT"
MIB = 1 << 20


@dataclasses.dataclass(frozen=True)
class SoakLength:
    """A number of faults or a duration."""

    faults: int | None = None
    seconds: int | None = None

    @classmethod
    def parse(cls, text: str) -> SoakLength:
        if not text:
            return cls(faults=len(KINDS))  # one round: every kind once
        if text.isdigit():
            return cls(faults=int(text))
        if text[-1] in UNITS and text[:-1].isdigit():
            return cls(seconds=int(text[:-1]) * UNITS[text[-1]])
        raise ValueError(f"ODRADEK_SOAK={text!r}: give a number of faults or 90s, 120m, 2h")

    def go_on(self, faults: int, seconds: float) -> bool:
        return faults < self.faults if self.faults is not None else seconds < (self.seconds or 0)

    @property
    def expected_seconds(self) -> int:
        return self.seconds if self.seconds is not None else (self.faults or 0) * SECONDS_PER_FAULT

    @property
    def disk_bytes(self) -> int:
        """Broker 0's disk: twice what the producers write meanwhile, and some slack."""
        rate = RATE_PER_PRODUCER * len(PRODUCERS) * RECORD_BYTES
        return 2 * rate * self.expected_seconds + DISK_SLACK_BYTES


LENGTH = SoakLength.parse(os.environ.get("ODRADEK_SOAK", ""))


@dataclasses.dataclass
class Soak:
    """The running system under the nemesis."""

    target: Target
    mirror_target: Broker
    consumer: Member
    group: str
    producers: list[subprocess.Popen[bytes]]
    workdir: Path

    @property
    def cluster(self) -> Cluster:
        return self.target.cluster

    @property
    def topic(self) -> str:
        return self.target.load.topic


@pytest.mark.slow
@pytest.mark.timeout(int(LENGTH.expected_seconds * 1.5) + SETUP_AND_CHECKS_S)
def test_every_fault_kind_for_the_soak_length_loses_nothing_and_leaks_nothing(
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("ODRADEK_SOAK_SEED", time.time_ns() % 1_000_000))
    print(f"soak of {LENGTH}, seed {seed} (set ODRADEK_SOAK_SEED to repeat)")
    with members_directory() as directory, contextlib.ExitStack() as stack:
        soak = start(stack, directory, tmp_path, random.Random(seed))
        injected = run_nemesis(soak.target, KINDS, LENGTH.go_on, GroupProgress(soak))
        soak.cluster.wait_until(lambda: soak.cluster.fully_replicated(soak.topic), "all in sync")
        time.sleep(1.0)
        exit_codes = stop_all(soak.producers)
        report = build_report(soak, injected, seed)
        publish(report, tmp_path)
        assert exit_codes == [0] * len(PRODUCERS), exit_codes
        check_load(soak.cluster, soak.topic, tmp_path)
        check_copies_and_memory(report)


class GroupProgress:
    """Between faults, the consumer group keeps reading: within GROUP_LAG_S it has read as
    many records as had been acknowledged when the last check passed."""

    def __init__(self, soak: Soak) -> None:
        self.soak = soak
        self.owed = 0

    def __call__(self) -> str:
        consumer = self.soak.consumer
        deadline = time.monotonic() + GROUP_LAG_S
        while (read := consumer.records_read()) < self.owed and consumer.alive:
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert read >= self.owed, self.stalled(read)
        self.owed = self.soak.target.load.acks()
        return f"the group had read {read:,} records of {self.owed:,} acknowledged"

    def stalled(self, read: int) -> str:
        consumer = self.soak.consumer
        member_id, partitions, _, committed = consumer.snapshot()
        log = consumer.log_path.read_text(errors="replace")[-4000:]
        return (
            f"the consumer group read {read:,} records, not the {self.owed:,} acknowledged "
            f"before the last fault, in {GROUP_LAG_S} s; member alive: {consumer.alive}, id "
            f"{member_id!r}, partitions {partitions}, committed {committed}; the group: "
            f"{self.described()}; the member's log ends:\n{log}"
        )

    def described(self) -> str:
        """The group as its coordinator describes it, or why it cannot."""
        admin = AdminClient({"bootstrap.servers": self.soak.cluster.bootstrap, "log_level": 0})
        try:
            group = admin.describe_consumer_groups([self.soak.group])[self.soak.group].result(10)
        except KafkaException as error:
            return f"not described: {error}"
        members = [(m.member_id, [tp.partition for tp in m.assignment.topic_partitions])
                   for m in group.members]  # fmt: skip
        return f"{group.state} on broker {group.coordinator.id}, members {members}"


def start(stack: contextlib.ExitStack, directory: Path, workdir: Path, rng: random.Random) -> Soak:
    """etcd, the cluster, the mirror and its target, the consumer and the producers, each
    stopped by ``stack`` (the cluster before its disk is unmounted)."""
    etcd = EtcdCluster(directory, run_as=ETCD_UIDS, binary=etcd_with_the_lease_fix())
    stack.callback(etcd.kill)
    etcd.start()
    disk = stack.enter_context(small_filesystem(workdir / "disk", LENGTH.disk_bytes))
    proxies = [stack.enter_context(proxy_to("127.0.0.1", m.client_port)) for m in etcd.members]
    clock = SteppedClock(workdir / "faketime")
    cluster = soak_cluster(workdir, etcd, disk / "data", clock, proxies)
    stack.callback(cluster.close)
    cluster.start()
    topic = cluster.create_topic(PARTITIONS, 3, TOPIC_SETTINGS, prefix="soak")
    mirror_target = stack.enter_context(Broker(workdir / "mirror-target")).start()
    mirror = MirrorRunner(workdir / "mirror", soak_mirror(cluster, mirror_target, topic))
    stack.callback(mirror.kill)
    mirror.start()
    members = started_members(workdir)
    stack.callback(next, members, None)  # resumed past its yield, it kills every member
    group = unique_name("soak-group")
    # librdkafka's debug log (its group and connections by default): where a stalled member is
    consumer = next(members)("confluent-kafka", cluster.bootstrap, topic, group, debug=CLIENT_DEBUG)
    producers = stack.enter_context(producer_processes(cluster.bootstrap, topic, workdir))
    rules = stack.enter_context(firewall())
    load = Load(cluster, etcd, topic, workdir)
    # Idempotent producers need etcd for their producer ids: none may start under a fault.
    cluster.wait_until(lambda: load.acks() > 0, "the first records acknowledged")
    target = Target(load, rules, proxies, disk, clock, rng)
    return Soak(target, mirror_target, consumer, group, producers, workdir)


def soak_cluster(
    workdir: Path, etcd: EtcdCluster, log_dir: Path, clock: SteppedClock, proxies: list[TcpProxy]
) -> Cluster:
    """Broker 0 logging to ``log_dir``, broker 1 on ``clock``, broker 2 reaching etcd
    through ``proxies``."""
    cluster = Cluster(
        workdir / "cluster",
        etcd,
        3,
        settings={**CLUSTER_SETTINGS, "cluster.name": unique_name("soak")},
        per_node={
            DISK_FULL_BROKER: {"log.dirs": str(log_dir)},
            CUT_OFF_BROKER: {"etcd.endpoints": ",".join(f"http://{p.address}" for p in proxies)},
        },
    )
    cluster.brokers[DISK_FULL_BROKER].data_dir = log_dir  # where replica_logs reads replicas
    cluster.brokers[CLOCK_BROKER].env.update(clock.environment())
    return cluster


def soak_mirror(cluster: Cluster, target: Broker, topic: str) -> dict[str, Any]:
    """``topic`` mirrored exactly once to ``target`` as ``east.<topic>``."""
    return mirror_document(
        cluster.brokers[0],
        target,
        name=unique_name("soak-mirror"),
        source={"bootstrapServers": cluster.bootstrap},
        topics={"include": [topic]},
        exactlyOnce=True,
    )


# -- the report -------------------------------------------------------------------------------

Key = tuple[str, int]  # (producer, sequence)


def record_key(value: str) -> Key:
    name, sequence, _ = value.split(":", 2)
    return name, int(sequence)


def consumed(soak: Soak) -> Counter[Key]:
    """What the consumer group read, every delivery counted."""
    return Counter(map(record_key, seen([soak.consumer]).elements()))


def mirrored(soak: Soak) -> Counter[Key]:
    """What the mirror's target holds for a read_committed reader (``east``: the source's
    alias in mirror_document)."""
    values = read_committed(soak.mirror_target.bootstrap, f"east.{soak.topic}", PARTITIONS)
    return Counter(map(record_key, values))


def copies_of(read: Callable[[], Counter[Key]], source: Counter[Key]) -> Counter[Key]:
    """What ``read`` returns once it holds every source record, or after CATCH_UP_S."""
    deadline = time.monotonic() + CATCH_UP_S
    while not (copies := read()).keys() >= source.keys() and time.monotonic() < deadline:
        time.sleep(1.0)
    return copies


def copy_figures(copies: Counter[Key], acked: set[Key], source: Counter[Key]) -> dict[str, Any]:
    return {
        "records": copies.total(),
        "distinct": len(copies),
        "acknowledged_missing": len(acked - copies.keys()),
        "same_as_source": copies == source,
    }


def build_report(soak: Soak, injected: Injected, seed: int) -> dict[str, Any]:
    reports = [read_producer_report(soak.workdir / f"{name}.report", name) for name in PRODUCERS]
    acked = {(report.name, sequence) for report in reports for sequence in report.acked}
    stored = read_partitions(soak.cluster.bootstrap, soak.topic, PARTITIONS)
    places: dict[Key, list[tuple[int, int]]] = defaultdict(list)
    for partition, records in stored.items():
        for offset, value in records:
            places[record_key(value.decode())].append((partition, offset))
    source = Counter({key: len(at) for key, at in places.items()})
    copies = {key: at for key, at in places.items() if len(at) > 1}
    batch_of = batch_producers(soak.cluster.brokers[DISK_FULL_BROKER].data_dir, soak.topic)
    resent = {key for key, at in copies.items() if resent_under_a_new_epoch(at, batch_of)}
    consumer = copies_of(lambda: consumed(soak), source)
    mirror = copies_of(lambda: mirrored(soak), source)
    return {
        "length": dataclasses.asdict(LENGTH),
        "seed": seed,
        "seconds": round(injected.seconds),
        "faults": dict(sorted(injected.faults.items())),
        "faults_total": injected.faults.total(),
        "acknowledged": len(acked),
        "lost": len(acked - source.keys()),
        "duplicated": sum(len(at) - 1 for key, at in copies.items() if key not in resent),
        "resent_by_the_client": sum(len(copies[key]) - 1 for key in resent),
        "consumer_group": copy_figures(consumer, acked, source),
        "mirror": copy_figures(mirror, acked, source),
        "brokers": footprint_summary(injected.samples),
        "samples": [dataclasses.asdict(sample) for sample in injected.samples],
    }


def footprint_summary(samples: list[Sample]) -> dict[int, dict[str, float]]:
    """Per broker: first, max and last RSS and fds, and the RSS growth from the median of the
    first quarter of the samples to that of the last."""
    series: dict[int, list[Sample]] = defaultdict(list)
    for sample in samples:
        series[sample.node].append(sample)
    summary = {}
    for node, mine in sorted(series.items()):
        rss, fds = [s.rss_bytes for s in mine], [s.fds for s in mine]
        quarter = max(1, len(rss) // 4)
        early, late = statistics.median(rss[:quarter]), statistics.median(rss[-quarter:])
        summary[node] = {
            "samples": len(rss),
            "rss_first": rss[0],
            "rss_max": max(rss),
            "rss_last": rss[-1],
            "rss_first_quarter_median": early,
            "rss_last_quarter_median": late,
            "rss_growth": late - early,
            "fds_first": fds[0],
            "fds_max": max(fds),
            "fds_last": fds[-1],
        }
    return summary


def publish(report: dict[str, Any], workdir: Path) -> None:
    """Print the report (samples left out) and write it whole as JSON."""
    text = json.dumps(report, indent=1)
    (workdir / "soak-report.json").write_text(text)
    if os.environ.get(REPORT_ENV):
        Path(os.environ[REPORT_ENV]).write_text(text)
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=1))
    for node, footprint in report["brokers"].items():
        rss = {key: f"{footprint[f'rss_{key}'] / MIB:.0f}" for key in ("first", "max", "last")}
        growth = footprint["rss_growth"] / MIB
        fds = {key: footprint[f"fds_{key}"] for key in ("first", "max", "last")}
        print(f"broker {node}: RSS MiB {rss}, growth {growth:+.1f} MiB (last vs first quarter "
              f"medians); open fds {fds}")  # fmt: skip


def check_copies_and_memory(report: dict[str, Any]) -> None:
    assert report["consumer_group"]["acknowledged_missing"] == 0, report["consumer_group"]
    assert report["mirror"]["same_as_source"], report["mirror"]
    leaking = {
        node: footprint
        for node, footprint in report["brokers"].items()
        if footprint["rss_last_quarter_median"]
        > max(LEAK_FACTOR * footprint["rss_first_quarter_median"], LEAK_FLOOR_BYTES)
    }
    assert not leaking, f"brokers whose memory more than doubled past 1 GiB: {leaking}"
