"""The long soak's nemesis (test_soak.py): every fault kind of the fault tests, at random,
against one cluster under load.

A fault kind is a function of the ``Target`` (the load, and handles on the firewall, the
proxies to etcd, the small disk and the stepped clock) that injects one fault, heals it
and says what it did; each reuses the checks of the test that introduced it.
``run_nemesis`` draws them in rounds, every kind once per round in a seeded random order
(so that a short run meets every kind); before each it waits until every partition has
min.insync.replicas in sync, moves leaderships back to the preferred replicas and samples
each running broker's resident memory and open file descriptors.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from cluster_harness import WAIT_S, Cluster
from confluent_kafka import ElectionType
from confluent_kafka.admin import AdminClient
from disk_faults import fill
from tcp_proxy import TcpProxy
from test_clock_faults import SteppedClock
from test_cluster_failover import (
    MIN_INSYNC,
    kill_controller,
    kill_leader,
    leaders_elsewhere,
    pause_leader,
)
from test_disk_faults import HALTED, offline_lines
from test_etcd_faults import (
    MEMBER_FAULT_S,
    Firewall,
    Load,
    broker_cut_off,
    member_index,
    quorum_loss,
)

DISK_FULL_BROKER = 0  # its only log dir is the small disk
CLOCK_BROKER = 1  # runs under libfaketime
CUT_OFF_BROKER = 2  # reaches etcd only through the proxies (test_etcd_faults.broker_cut_off)
FREE_WHEN_FULL = 512 << 10
CLOCK_STEPS = ("+3h", "-3h", "+0")
CLOCK_PHASE_S = 3.0


@dataclass
class Target:
    """What the faults act on."""

    load: Load
    rules: Firewall
    proxies: list[TcpProxy]
    disk: Path
    clock: SteppedClock
    rng: random.Random

    @property
    def cluster(self) -> Cluster:
        return self.load.cluster


Fault = Callable[[Target, int], str]


# -- broker faults (test_cluster_failover, test_etcd_faults, test_disk_faults, clock) ---------


def broker_leader_killed(target: Target, number: int) -> str:
    return kill_leader(target.cluster, target.load.topic, number)


def broker_controller_killed(target: Target, number: int) -> str:
    return kill_controller(target.cluster, target.load.topic, number)


def broker_leader_paused(target: Target, number: int) -> str:
    return pause_leader(target.cluster, target.load.topic, number)


def broker_cut_off_from_etcd(target: Target, number: int) -> str:
    broker_cut_off(target.load, target.proxies)
    return f"broker {CUT_OFF_BROKER} cut off from etcd, then back"


def disk_full(target: Target, number: int) -> str:
    """Broker 0's only log dir fills up: it halts with one ERROR line; once the space is
    freed it is restarted."""
    cluster, broker = target.cluster, target.cluster.brokers[DISK_FULL_BROKER]
    errors = len(offline_lines(broker))
    filler = fill(target.disk, leave=FREE_WHEN_FULL)
    try:
        assert broker.process is not None
        exit_code = broker.process.wait(WAIT_S)
    finally:
        filler.unlink()
    assert exit_code == HALTED, broker.describe()
    assert len(offline_lines(broker)) == errors + 1, broker.describe()
    cluster.wait_until(
        leaders_elsewhere(cluster, target.load.topic, DISK_FULL_BROKER), "leaders moved away"
    )
    cluster.restart(DISK_FULL_BROKER)
    return f"disk full on broker {DISK_FULL_BROKER}: halted, space freed, restarted"


def clock_stepped(target: Target, number: int) -> str:
    """Broker 1's wall clock steps through CLOCK_STEPS: records keep being acknowledged, no
    broker's session ends and no leadership moves (test_clock_faults.py checks the rest on
    one broker)."""
    before = target.load.settled()
    acked = target.load.acks()
    for offset in CLOCK_STEPS:
        target.clock.step(offset)
        time.sleep(CLOCK_PHASE_S)
    assert target.load.acks() > acked, "nothing acknowledged while the clock stepped"
    after = target.load.settled()
    assert after == before, f"a clock step moved sessions or leaders: {before} -> {after}"
    return f"broker {CLOCK_BROKER}'s clock stepped {', '.join(CLOCK_STEPS)}"


# -- etcd faults (test_etcd_faults) -----------------------------------------------------------


def etcd_member_killed(target: Target, number: int) -> str:
    index = member_index(target.load.etcd, leader=target.rng.random() < 0.5)
    member = target.load.etcd.members[index]
    return member_fault(target, f"etcd member {index} killed", member.kill, member.start)


def etcd_member_paused(target: Target, number: int) -> str:
    index = member_index(target.load.etcd, leader=target.rng.random() < 0.5)
    process = target.load.etcd.members[index].process
    return member_fault(
        target,
        f"etcd member {index} paused",
        lambda: process.signal(signal.SIGSTOP),
        lambda: process.signal(signal.SIGCONT),
    )


def etcd_member_cut_off(target: Target, number: int) -> str:
    index = target.rng.randrange(len(target.load.etcd.members))
    return member_fault(
        target,
        f"etcd member {index} cut off from its peers",
        lambda: target.rules.cut_from_peers(target.load.etcd, index),
        target.rules.heal,
    )


def member_fault(
    target: Target, fault: str, inject: Callable[[], None], heal: Callable[[], None]
) -> str:
    """Once every broker is registered and unfenced, ``inject`` for MEMBER_FAULT_S, records
    being acknowledged meanwhile; ``heal``, and the same wait again: no leadership moved.
    Sessions may have been renewed (test_etcd_faults.Load.assert_only_a_pause says why)."""
    load = target.load
    _, leaders = load.settled()
    acked = load.acks()
    inject()
    try:
        time.sleep(MEMBER_FAULT_S)
        assert load.acks() > acked, f"nothing acknowledged during '{fault}'"
    finally:
        heal()
    _, after = load.settled()
    assert after == leaders, (
        f"'{fault}' moved leaders (partition: leader, epoch): {leaders} -> {after}"
    )
    return fault


def etcd_quorum_lost(target: Target, number: int) -> str:
    quorum_loss(target.load, target.load.etcd)
    return "etcd quorum lost for three session timeouts"


FAULT_KINDS: tuple[Fault, ...] = (
    broker_leader_killed,
    broker_controller_killed,
    broker_leader_paused,
    broker_cut_off_from_etcd,
    etcd_member_killed,
    etcd_member_paused,
    etcd_member_cut_off,
    etcd_quorum_lost,
    disk_full,
    clock_stepped,
)


# -- the run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One broker's footprint at one moment (wall-clock seconds)."""

    at: float
    node: int
    rss_bytes: int
    fds: int


@dataclass
class Injected:
    """What the nemesis did and saw."""

    faults: Counter[str] = field(default_factory=Counter)
    samples: list[Sample] = field(default_factory=list)
    seconds: float = 0.0


def footprints(cluster: Cluster) -> list[Sample]:
    """VmRSS and the number of open file descriptors of every running broker."""
    return [
        Sample(time.time(), node, broker.rss_bytes(), len(os.listdir(f"/proc/{broker.pid}/fd")))
        for node, broker in cluster.brokers.items()
        if broker.is_running()
    ]


def preferred_leaders(cluster: Cluster) -> None:
    """Leaderships back to the preferred replicas in sync, as auto.leader.rebalance.enable
    would do but never during a fault: else a run of faults can leave one broker leading
    everything, and cut off from etcd it would stall every producer at once (they keep
    sending to it until their metadata moves away from it)."""
    # held in a name: a client destroyed meanwhile fails the future
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    admin.elect_leaders(ElectionType.PREFERRED, None).result(WAIT_S)


def chosen_kinds(names: str) -> tuple[Fault, ...]:
    """The fault kinds named in ``names`` (comma-separated), or every kind if it is empty."""
    if not names.strip():
        return FAULT_KINDS
    by_name = {kind.__name__: kind for kind in FAULT_KINDS}
    unknown = [name for name in names.split(",") if name.strip() not in by_name]
    if unknown:
        raise ValueError(f"unknown fault kinds {unknown}: choose from {sorted(by_name)}")
    return tuple(by_name[name.strip()] for name in names.split(","))


def schedule(rng: random.Random, kinds: tuple[Fault, ...]) -> Iterator[Fault]:
    """Rounds of every one of ``kinds`` once, each round in a fresh random order."""
    while True:
        round_ = list(kinds)
        rng.shuffle(round_)
        yield from round_


def run_nemesis(
    target: Target,
    kinds: tuple[Fault, ...],
    go_on: Callable[[int, float], bool],
    readers: Callable[[], str],
) -> Injected:
    """Faults of ``kinds`` while ``go_on(faults so far, seconds so far)``; samples before
    each and at the end. ``readers`` checks, once the cluster has settled, that the readers
    of the topic keep up, and says how far they have read."""
    cluster, topic = target.cluster, target.load.topic
    injected, began = Injected(), time.monotonic()

    def settle() -> float:
        # Not a full ISR: a broker hit by the previous fault may still be catching up.
        waited = cluster.wait_until(
            lambda: cluster.min_insync_everywhere(topic, MIN_INSYNC), "ISRs of min.insync"
        )
        preferred_leaders(cluster)
        injected.samples.extend(footprints(cluster))
        return waited

    for number, fault in enumerate(schedule(target.rng, kinds)):
        if not go_on(number, time.monotonic() - began):
            break
        waited = settle()
        read = readers()
        at, started = time.strftime("%H:%M:%S"), time.monotonic()
        done = fault(target, number)
        injected.faults[fault.__name__] += 1
        took = time.monotonic() - started
        print(f"{at} fault {number + 1}: {done} "
              f"({waited:.1f} s to settle + {took:.1f} s; before it {read})")  # fmt: skip
    settle()
    readers()
    injected.seconds = time.monotonic() - began
    return injected
