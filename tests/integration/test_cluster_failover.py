"""Failover of a 3-broker cluster (issue 5, "What it must show" 1 and part of 5).

The fault test loads an RF=3, min.insync.replicas=2 topic with idempotent
acks=all producer processes (durability_producer.py: each record carries its
producer's name and sequence, every delivery report goes to a file) while it
SIGKILLs partition leaders and the controller, restarts them, and pauses
leaders (SIGSTOP) past the session timeout. At the end every acknowledged
record is at its acknowledged offset exactly once, in order per producer, and
every in-sync replica's log is byte-identical up to the high watermark.

Between faults the test waits until every partition has min.insync.replicas
in sync again (not a full ISR: a broker paused by the previous fault may still be
catching up). ODRADEK_CLUSTER_FAULTS sets the number of faults (default 20,
about 90 s on two cores; test_soak.py adds the other fault kinds). The same test runs on a
cluster secured end to end (secured_cluster.py: SASL_SSL between brokers, mutual TLS for
clients and to etcd) with ODRADEK_SECURED_CLUSTER_FAULTS faults (default 12).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import confluent_kafka
import pytest
from broker_process import Broker, BrokerStartError, terminate_all
from cluster_harness import FAST_FAILOVER, Cluster, ClusterFactory
from kafka_wire import WireClient, build_batch
from replica_logs import (
    assert_replicas_identical,
    batch_producers,
    replicas_summary,
    stored_batches,
)
from test_durability import (
    PRODUCER_SCRIPT,
    ProducerReport,
    check_durability,
    read_partitions,
    read_report,
)

FAULTS = int(os.environ.get("ODRADEK_CLUSTER_FAULTS", "20"))
SECURED_FAULTS = int(os.environ.get("ODRADEK_SECURED_CLUSTER_FAULTS", "12"))
PARTITIONS = 3
PRODUCERS = ("idem-0", "idem-1", "idem-2")
RATE_PER_PRODUCER = 200
SESSION_S = 2.0
MIN_INSYNC = 2
TOPIC_CONFIGS = {"min.insync.replicas": str(MIN_INSYNC)}


# -- load ------------------------------------------------------------------------------------


@contextlib.contextmanager
def producer_processes(
    bootstrap: str,
    topic: str,
    workdir: Path,
    client_config: Mapping[str, str] | None = None,
    partitions: int = PARTITIONS,
    launch: Callable[[list[str]], list[str]] = list,
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Idempotent acks=all producers (PRODUCERS), each command line passed through
    ``launch``; always stopped (SIGTERM, then SIGKILL) on the way out."""
    started: list[subprocess.Popen[bytes]] = []
    settings = [f"--config={key}={value}" for key, value in (client_config or {}).items()]
    try:
        for name in PRODUCERS:
            with (workdir / f"{name}.log").open("wb") as log:
                started.append(
                    subprocess.Popen(
                        launch([
                            sys.executable, str(PRODUCER_SCRIPT), "--bootstrap", bootstrap,
                            "--topic", topic, "--partitions", str(partitions), "--name", name,
                            "--mode", "idempotent", "--report", str(workdir / f"{name}.report"),
                            "--rate", str(RATE_PER_PRODUCER), *settings,
                        ]),
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )  # fmt: skip
        yield started
    finally:
        terminate_all(started, 90)


def stop_producer(process: subprocess.Popen[bytes], timeout: float = 90) -> int | None:
    """Wait for a producer told to stop; its exit code, or None if it hung (its thread
    stacks then go to its log, and it is killed)."""
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(1)
        process.kill()
        process.wait()
        return None


def produce_acked(
    bootstrap: str,
    topic: str,
    count: int,
    prefix: str = "r",
    client_config: Mapping[str, str] | None = None,
) -> int:
    """``count`` records with an idempotent acks=all producer; asserts every one is acked."""
    failures: list[str] = []

    def on_delivery(err: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
        if err is not None:
            failures.append(str(err))

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 5,
            **(client_config or {}),
        }
    )
    for index in range(count):
        producer.produce(topic, f"{prefix}{index}".encode(), on_delivery=on_delivery)
        producer.poll(0)
    assert producer.flush(60) == 0, "records still undelivered after 60 s"
    assert not failures, f"{len(failures)} records failed, first: {failures[0]}"
    return count


# -- checks ----------------------------------------------------------------------------------

UNKNOWN_OFFSET = -1


def read_producer_report(path: Path, name: str) -> ProducerReport:
    """A producer's report; an ACK whose offset librdkafka did not know (``None``: delivered
    as already persisted, e.g. after a retry) gets offset ``UNKNOWN_OFFSET``."""
    known = path.with_suffix(".known")
    known.write_text(path.read_text().replace(" None\n", f" {UNKNOWN_OFFSET}\n"))
    return read_report(known, name, "idempotent")


def known_offsets(report: ProducerReport) -> ProducerReport:
    acked = {seq: at for seq, at in report.acked.items() if at[1] != UNKNOWN_OFFSET}
    return replace(report, acked=acked)


def check_acked_without_offset(
    stored: dict[int, list[tuple[int, bytes]]], reports: list[ProducerReport]
) -> None:
    """Records acknowledged without an offset are in their partition too (exactly once:
    check_durability already refused duplicates of every record of an idempotent producer)."""
    for report in reports:
        unknown = {seq: p for seq, (p, offset) in report.acked.items() if offset == UNKNOWN_OFFSET}
        if unknown:
            print(f"{report.name}: {len(unknown)} records acknowledged without an offset")
        present = {
            (partition, value.split(b":", 2)[1])
            for partition, records in stored.items()
            for _, value in records
            if value.startswith(f"{report.name}:".encode())
        }
        missing = [seq for seq, p in unknown.items() if (p, str(seq).encode()) not in present]
        assert not missing, f"{report.name}: acknowledged records missing: {sorted(missing)[:10]}"


# -- faults ----------------------------------------------------------------------------------


def leaders_elsewhere(cluster: Cluster, topic: str, away_from: int) -> Callable[[], bool]:
    """Every partition of ``topic`` led by a reachable broker other than ``away_from``."""

    def holds() -> bool:
        reachable = set(cluster.reachable()) - {away_from}
        return all(p.leader in reachable for p in cluster.state().partitions if p.topic == topic)

    return holds


def kill_leader(cluster: Cluster, topic: str, round_number: int) -> str:
    victim = cluster.leader_of(topic, round_number % PARTITIONS)
    cluster.kill(victim)
    cluster.wait_until(leaders_elsewhere(cluster, topic, victim), "new leaders elected")
    cluster.restart(victim)
    return f"SIGKILL leader {victim}"


def kill_controller(cluster: Cluster, topic: str, round_number: int) -> str:
    cluster.wait_until(lambda: cluster.controller() >= 0, "a controller")
    victim = cluster.controller()
    cluster.kill(victim)
    cluster.wait_until(
        lambda: cluster.controller() in set(cluster.reachable()) - {victim}, "a new controller"
    )
    cluster.wait_until(leaders_elsewhere(cluster, topic, victim), "new leaders elected")
    cluster.restart(victim)
    return f"SIGKILL controller {victim}"


def pause_leader(cluster: Cluster, topic: str, round_number: int) -> str:
    victim = cluster.leader_of(topic, round_number % PARTITIONS)
    cluster.pause(victim)
    time.sleep(SESSION_S + 0.5)
    cluster.wait_until(leaders_elsewhere(cluster, topic, victim), "leaders replaced")
    cluster.resume(victim)
    return f"SIGSTOP leader {victim} past the session timeout, then SIGCONT"


FAULT_KINDS = (kill_leader, kill_controller, pause_leader)


@pytest.mark.slow
@pytest.mark.timeout(max(300, FAULTS * 20))
@pytest.mark.parametrize(
    ("factory", "faults"),
    [("cluster_factory", FAULTS), ("secured_cluster_factory", SECURED_FAULTS)],
    ids=["plaintext", "secured"],
)
def test_acknowledged_records_survive_leader_and_controller_faults(
    factory: str, faults: int, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    cluster_factory: ClusterFactory = request.getfixturevalue(factory)
    cluster = cluster_factory(brokers=3)
    # Small segments: restarts recover only the segments after the recovery point.
    configs = {**TOPIC_CONFIGS, "segment.bytes": str(1 << 20)}
    topic = cluster.create_topic(PARTITIONS, 3, configs, prefix="failover")
    client_config = cluster.client_config
    with producer_processes(cluster.bootstrap, topic, tmp_path, client_config) as processes:
        time.sleep(1.0)
        began = time.monotonic()
        for round_number in range(faults):
            # Not a full ISR: a broker paused by the previous fault may still be catching
            # up. Enough copies that the next fault leaves an in-sync replica to elect.
            waited = cluster.wait_until(
                lambda: cluster.min_insync_everywhere(topic, MIN_INSYNC), "ISRs of min.insync"
            )
            fault = FAULT_KINDS[round_number % len(FAULT_KINDS)]
            started = time.monotonic()
            done = fault(cluster, topic, round_number)
            took = time.monotonic() - started
            print(f"fault {round_number + 1}/{faults}: {done} ({waited:.1f} s + {took:.1f} s)")
        print(f"{faults} faults in {time.monotonic() - began:.0f} s")
        cluster.wait_until(lambda: cluster.fully_replicated(topic), "all replicas in sync")
        time.sleep(1.0)
        for process in processes:
            process.send_signal(signal.SIGTERM)
        exit_codes = [stop_producer(process) for process in processes]

    reports = [read_producer_report(tmp_path / f"{name}.report", name) for name in PRODUCERS]
    logs = {name: (tmp_path / f"{name}.log").read_text()[-4000:] for name in PRODUCERS}
    assert None not in exit_codes, f"a producer ignored SIGTERM; stacks: {logs}"
    assert exit_codes == [0] * len(PRODUCERS), (exit_codes, [r.fatal for r in reports], logs)
    print({r.name: (len(r.acked), len(r.nacked), r.end_line) for r in reports})
    stored = read_partitions(cluster.bootstrap, topic, PARTITIONS, client_config)

    check_durability(
        stored,
        [known_offsets(report) for report in reports],
        batch_producers(cluster.brokers[0].data_dir, topic),
    )
    check_acked_without_offset(stored, reports)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "all replicas in sync")
    assert_replicas_identical(cluster, topic, PARTITIONS)


# -- controlled shutdown ---------------------------------------------------------------------


@pytest.mark.slow
def test_controlled_shutdown_moves_leaderships_before_exit_and_nothing_goes_offline(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(6, 3, TOPIC_CONFIGS, prefix="controlled")
    produce_acked(cluster.bootstrap, topic, 600)
    victim = cluster.leader_of(topic, 0)
    offline: list[str] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            with contextlib.suppress(AssertionError, OSError):
                state = cluster.state(via=(victim + 1) % 3)
                offline.extend(f"{p.topic}-{p.partition}" for p in state.offline)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        began = time.monotonic()
        assert cluster.stop(victim) == 0, cluster.brokers[victim].describe()
        took = time.monotonic() - began
        still_led = [
            p.partition
            for p in cluster.state(via=(victim + 1) % 3).partitions
            if p.leader == victim
        ]
    finally:
        sampling.set()
        sampler.join()
    # Had the leaderships not moved before the exit, Metadata would still name the
    # stopped broker until its session expired.
    assert not still_led, f"partitions {still_led} still led by {victim} after it exited"
    assert not offline, f"partitions went offline during the shutdown: {sorted(set(offline))}"
    print(f"controlled shutdown of broker {victim} took {took:.1f} s")
    cluster.restart(victim)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "back in sync")
    assert sum(assert_replicas_identical(cluster, topic, 6).values()) == 600


# -- empty disk --------------------------------------------------------------------------------


@pytest.mark.slow
def test_broker_restarted_with_an_empty_disk_re_replicates_everything(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="empty-disk")
    produced = produce_acked(cluster.bootstrap, topic, 3000)
    # The controller as victim: it comes back as soon as its lease expires, when the next
    # controller has only just been elected. Still listed as a leader then, it must not
    # lead (from its empty disk) before the controller has taken its leaderships away.
    victim = cluster.controller()
    cluster.kill(victim)
    cluster.restart(victim, empty_disk=True)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "the wiped broker back in sync")
    high_watermarks = assert_replicas_identical(cluster, topic, PARTITIONS)
    assert sum(high_watermarks.values()) == produced, (
        f"high watermarks {high_watermarks}\n{replicas_summary(cluster, topic, PARTITIONS)}"
    )

    # The re-replicated copy alone serves everything once the others have stopped.
    for other in set(cluster.brokers) - {victim}:
        assert cluster.stop(other) == 0
    cluster.wait_until(
        lambda: all(p.leader == victim for p in cluster.state().partitions if p.topic == topic),
        f"broker {victim} leads every partition",
    )
    stored = read_partitions(cluster.brokers[victim].bootstrap, topic, PARTITIONS)
    values = sorted(value for records in stored.values() for _, value in records)
    assert values == sorted(f"r{index}".encode() for index in range(produced))


# -- a broker restarted before its old session expired ----------------------------------------

LONG_SESSION_S = 60


@pytest.mark.slow
def test_crashed_broker_restarted_at_once_replaces_its_own_registration_but_not_another_nodes(
    cluster_factory: ClusterFactory,
) -> None:
    """Its lease outlives the crash; the registration names the broker's log directory,
    which the new process holds, so the broker removes it instead of waiting out (or, when
    etcd fails to expire the lease, never getting past) the old session. A second process
    claiming the same node.id from another directory is still refused."""
    cluster = cluster_factory(
        brokers=3, settings={"broker.session.timeout.ms": str(LONG_SESSION_S * 1000)}
    )
    topic = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="restart-at-once")
    produced = produce_acked(cluster.bootstrap, topic, 300)
    crashed = cluster.brokers[1]
    cluster.kill(1)
    started = time.monotonic()
    crashed.start(timeout=LONG_SESSION_S / 2)
    assert time.monotonic() - started < LONG_SESSION_S / 2
    assert "removing the registration an earlier run left" in crashed.log_tail(200)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "broker 1 back in sync")
    assert sum(assert_replicas_identical(cluster, topic, PARTITIONS).values()) == produced

    impostor = Broker(cluster.workdir / "impostor", settings=crashed.settings)
    with impostor, pytest.raises(BrokerStartError) as refused:
        impostor.start(timeout=LONG_SESSION_S / 2)
    assert "broker id 1 is already registered in etcd" in str(refused.value)
    assert crashed.is_running() and cluster.registered() == {0, 1, 2}


# -- an ISR that shrinks under a waiting write -------------------------------------------------

NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20


@pytest.mark.slow
def test_acks_all_write_is_refused_when_the_isr_shrinks_below_min_insync_while_it_waits(
    cluster_factory: ClusterFactory,
) -> None:
    """The batch is appended, then the only follower stops; once it leaves the ISR the high
    watermark passes the batch with a single copy, which must not count as acks=all."""
    cluster = cluster_factory(brokers=2)
    topic = cluster.create_topic(1, 2, {"min.insync.replicas": "2"}, prefix="shrinking-isr")
    leader = cluster.leader_of(topic, 0)
    follower = 1 - leader
    with WireClient.to(cluster.brokers[leader].bootstrap) as wire:
        cluster.pause(follower)
        try:
            answer = wire.produce(topic, 0, bytes(build_batch([b"one copy only"])))
        finally:
            cluster.resume(follower)
    assert answer.error_code.value == NOT_ENOUGH_REPLICAS_AFTER_APPEND, answer


# -- a paused leader ---------------------------------------------------------------------------


@pytest.mark.slow
def test_leader_paused_past_session_timeout_is_replaced_then_truncates_and_rejoins(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(1, 3, TOPIC_CONFIGS, prefix="paused-leader")
    produce_acked(cluster.bootstrap, topic, 100, prefix="before-")
    old_leader = cluster.leader_of(topic, 0)
    old_epoch = _leader_epoch(cluster, topic, via=old_leader)
    followers = [node for node in cluster.brokers if node != old_leader]

    # Give the old leader batches no follower has: with the followers paused, their
    # outstanding fetches take at most the first batch; acks=1 does not wait for them.
    for node in followers:
        cluster.pause(node)
    try:
        with WireClient.to(cluster.brokers[old_leader].bootstrap) as wire:
            for index in range(5):
                answer = wire.produce(topic, 0, bytes(build_batch([b"unreplicated"])), acks=1)
                assert answer.error_code.value == 0, answer
                time.sleep(0.02 if index == 0 else 0)
        cluster.pause(old_leader)
    finally:
        for node in followers:
            cluster.resume(node)
    old_log = stored_batches(cluster.brokers[old_leader].data_dir, topic, 0)

    cluster.wait_until(leaders_elsewhere(cluster, topic, old_leader), "a new leader")
    new_leader = cluster.leader_of(topic, 0)
    assert _leader_epoch(cluster, topic, via=new_leader) > old_epoch
    produce_acked(cluster.bootstrap, topic, 100, prefix="after-")
    new_log = stored_batches(cluster.brokers[new_leader].data_dir, topic, 0)
    diverged = old_log.keys() - new_log.keys() or any(
        old_log[offset] != new_log.get(offset) for offset in old_log
    )
    print(f"old leader {old_leader} diverged from new leader {new_leader}: {bool(diverged)}")

    cluster.resume(old_leader)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "the old leader back in the ISR")
    assert_replicas_identical(cluster, topic, 1)
    stored = read_partitions(cluster.bootstrap, topic, 1)[0]
    values = [value for _, value in stored if value != b"unreplicated"]
    expected = [f"before-{i}".encode() for i in range(100)] + [
        f"after-{i}".encode() for i in range(100)
    ]
    assert values == expected


def _leader_epoch(cluster: Cluster, topic: str, via: int) -> int:
    with WireClient.to(cluster.brokers[via].bootstrap) as wire:
        [answer] = [t for t in wire.metadata([topic]).topics if t.name == topic]
        return int(answer.partitions[0].leader_epoch)


@pytest.mark.slow
def test_stopping_every_broker_at_once_needs_no_controlled_shutdown_timeout(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(6, 3, TOPIC_CONFIGS, prefix="all-stop")
    produce_acked(cluster.bootstrap, topic, 300)
    began = time.monotonic()
    for broker in cluster.brokers.values():
        assert broker.process is not None
        broker.process.send_signal(signal.SIGTERM)
    took = {}
    for node_id, broker in cluster.brokers.items():
        assert broker.process is not None
        assert broker.process.wait(60) == 0, broker.describe()
        took[node_id] = round(time.monotonic() - began, 1)
    timeout_s = int(FAST_FAILOVER["controlled.shutdown.timeout.ms"]) / 1000
    assert max(took.values()) < timeout_s / 2, f"seconds to exit per broker: {took}"
