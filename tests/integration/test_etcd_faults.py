"""etcd faults under load (issue 21, point 1).

Three brokers on a 3-member etcd (``EtcdCluster``, each member under its own uid so
that iptables owner rules can cut one member's traffic; etcd 3.5.17, which has the
fix of etcd-io/etcd#15247) carry an RF=3,
min.insync.replicas=2 topic loaded by idempotent acks=all producer processes. Then:

- single members fail: a follower member killed, the etcd leader killed, the leader
  paused (SIGSTOP), the member the brokers use first cut off from its peers by iptables
  (it keeps answering clients with a silent watch) — each no more than a short pause: no
  broker loses its session, no partition changes leader, records keep being
  acknowledged, and a metadata change made meanwhile reaches every broker;
- etcd loses its quorum for three session timeouts: every broker keeps leading what it
  led, records keep being acknowledged, nobody is fenced, and everything carries on
  when the quorum returns;
- one broker is cut off from etcd (through TCP proxies) but not from the other brokers:
  its leaderships move, and once it reaches etcd again it rejoins.

At the end every acknowledged record is at its acknowledged offset exactly once, in
order per producer, and the replicas are byte-identical up to the high watermark.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster
from kafka_wire import WireClient
from replica_logs import assert_replicas_identical, batch_producers
from tcp_proxy import TcpProxy, proxy_to
from test_cluster_failover import (
    PRODUCERS,
    check_acked_without_offset,
    known_offsets,
    producer_processes,
    read_producer_report,
    stop_producer,
)
from test_durability import check_durability, count_acks, read_partitions

from odradek.broker.cluster.registration_history import REREGISTRATION_GRACE_S
from odradek.cli.etcd_process import EtcdCluster

PARTITIONS = 3
SESSION_S = 2.0
# Unused uids, one per etcd member, for the iptables owner rules.
ETCD_UIDS = (47810, 47811, 47812)
FIREWALL_TAG = unique_name("odradek-etcd-faults")
MEMBER_FAULT_S = 2 * SESSION_S + 1
GO_TOOL = Path(__file__).resolve().parents[2] / "tests" / "e2e" / "go_tool.sh"


# -- etcd, read directly ----------------------------------------------------------------------


def read_prefix(etcd: EtcdCluster, prefix: str) -> dict[str, tuple[bytes, int]]:
    """key -> (value, create revision) under ``prefix``, from the first member that answers."""
    body = {
        "key": base64.b64encode(prefix.encode()).decode(),
        "range_end": base64.b64encode(prefix[:-1].encode() + bytes([ord(prefix[-1]) + 1])).decode(),
    }
    for endpoint in etcd.endpoints:
        request = urllib.request.Request(
            f"{endpoint}/v3/kv/range", data=json.dumps(body).encode(), method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                kvs = json.load(response).get("kvs", [])
        except OSError:
            continue
        return {
            base64.b64decode(kv["key"]).decode(): (
                base64.b64decode(kv.get("value", "")),
                int(kv["create_revision"]),
            )
            for kv in kvs
        }
    raise AssertionError("no etcd member answered")


def registrations(etcd: EtcdCluster, cluster: str) -> dict[int, int]:
    """Each registered broker's registration (the create revision of its leased key)."""
    prefix = f"/odradek/{cluster}/brokers/"
    return {int(key[len(prefix) :]): rev for key, (_, rev) in read_prefix(etcd, prefix).items()}


def unfenced(etcd: EtcdCluster, cluster: str) -> dict[int, int]:
    """The registration the controller unfenced, for each broker."""
    prefix = f"/odradek/{cluster}/unfenced/"
    return {
        int(key[len(prefix) :]): int(value) for key, (value, _) in read_prefix(etcd, prefix).items()
    }


def leaderships(etcd: EtcdCluster, cluster: str, topic: str) -> dict[int, tuple[int, int]]:
    """partition -> (leader, leader epoch) as etcd holds them."""
    prefix = f"/odradek/{cluster}/partitions/{topic}/"
    return {
        int(key[len(prefix) :]): (state["leader"], state["leader_epoch"])
        for key, (value, _) in read_prefix(etcd, prefix).items()
        if (state := json.loads(value))
    }


# -- faults -----------------------------------------------------------------------------------


class Firewall:
    """iptables OUTPUT rules (loopback traffic passes OUTPUT), tagged, all removed on close."""

    def __init__(self) -> None:
        self._rules: list[list[str]] = []

    def drop(self, *match: str) -> None:
        rule = [*match, "-m", "comment", "--comment", FIREWALL_TAG, "-j", "DROP"]
        subprocess.run(["iptables", "-A", "OUTPUT", *rule], check=True)
        self._rules.append(rule)

    def cut_from_peers(self, etcd: EtcdCluster, member: int) -> None:
        """Drop every packet ``member`` sends except to its clients, and every packet
        to its peer port: it can neither send nor receive raft messages."""
        target = etcd.members[member]
        self.drop("-p", "tcp", "-m", "owner", "--uid-owner", str(ETCD_UIDS[member]),
                  "!", "--sport", str(target.client_port))  # fmt: skip
        self.drop("-p", "tcp", "--dport", str(target.peer_port))

    def heal(self) -> None:
        for rule in self._rules:
            subprocess.run(["iptables", "-D", "OUTPUT", *rule], check=False)
        self._rules.clear()


@contextlib.contextmanager
def firewall() -> Iterator[Firewall]:
    rules = Firewall()
    try:
        yield rules
    finally:
        rules.heal()


def member_index(etcd: EtcdCluster, leader: bool) -> int:
    """The etcd leader's index, or a follower's."""
    found = wait_for(etcd.leader, "an etcd leader")
    return found if leader else (found + 1) % len(etcd.members)


def wait_for(value: Callable[[], int | None], what: str, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while (found := value()) is None:
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {timeout} s")
        time.sleep(0.1)
    return found


# -- the test ---------------------------------------------------------------------------------


class Load:
    """What the checks between faults compare."""

    def __init__(self, cluster: Cluster, etcd: EtcdCluster, topic: str, workdir: Path) -> None:
        self.cluster, self.etcd, self.topic, self.workdir = cluster, etcd, topic, workdir
        self.name = cluster.brokers[0].settings["cluster.name"]

    def acks(self) -> int:
        return sum(count_acks(self.workdir / f"{name}.report") for name in PRODUCERS)

    def snapshot(self) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
        return registrations(self.etcd, self.name), leaderships(self.etcd, self.name, self.topic)

    def assert_only_a_pause(
        self,
        fault: str,
        inject: Callable[[], None],
        heal: Callable[[], None],
        renewals_allowed: bool = False,
    ) -> None:
        """``inject``; while it lasts, records are acknowledged and a new topic reaches
        every broker's metadata; after ``heal``, no leader moved, and no session was lost
        unless ``renewals_allowed``: an etcd leader that stalls and resumes revokes leases
        (etcd-io/etcd#15247), and the brokers then register again, continuing their runs."""
        self.cluster.wait_until(lambda: self.cluster.fully_replicated(self.topic), "in sync")
        before = self.snapshot()
        print(f"{time.strftime('%H:%M:%S')} {fault}")
        inject()
        began, acked = time.monotonic(), self.acks()
        try:
            probe = self.cluster.create_topic(1, 3, prefix="probe")
            for node in self.cluster.brokers:
                self.cluster.wait_until(
                    lambda node=node: any(  # type: ignore[misc]
                        p.topic == probe for p in self.cluster.state(via=node).partitions
                    ),
                    f"broker {node} sees a topic created during '{fault}'",
                    timeout=15,
                )
            time.sleep(max(MEMBER_FAULT_S - (time.monotonic() - began), 0))
            assert self.acks() > acked, f"nothing acknowledged during '{fault}'"
        finally:
            heal()
        after = self.settled()
        renewed = {node for node, epoch in after[0].items() if before[0].get(node) != epoch}
        assert after[1] == before[1], f"'{fault}' moved leaders: {before[1]} -> {after[1]}"
        assert renewals_allowed or not renewed, f"'{fault}' ended sessions: {before} -> {after}"
        print(f"{fault}: {self.acks() - acked} records acknowledged meanwhile, "
              f"sessions renewed: {sorted(renewed)}")  # fmt: skip

    def settled(self) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
        """The snapshot once every broker is registered and unfenced, and the grace for
        registering again (REREGISTRATION_GRACE_S) has passed."""
        time.sleep(REREGISTRATION_GRACE_S + 0.5)
        self.cluster.wait_until(
            lambda: (
                unfenced(self.etcd, self.name) == registrations(self.etcd, self.name)
                and len(unfenced(self.etcd, self.name)) == len(self.cluster.brokers)
            ),
            "every broker registered and unfenced",
        )
        return self.snapshot()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_etcd_member_quorum_and_broker_cut_off_faults_lose_nothing(tmp_path: Path) -> None:
    with members_directory() as directory:
        run_test(directory, tmp_path)


@contextlib.contextmanager
def members_directory() -> Iterator[Path]:
    """A directory the members' uids may enter (pytest's own is root's alone)."""
    directory = Path(tempfile.mkdtemp(prefix="odradek-etcd-"))
    directory.chmod(0o711)
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def etcd_with_the_lease_fix() -> str:
    """etcd 3.5.17 as tests/e2e/go_tool.sh builds it (the operator's default etcd), not
    Debian's 3.4.23: that one lacks etcd-io/etcd#16822, so a stalled leader that resumes
    revokes every lease that expired by its own clock (docs/cluster.md#etcd-faults)."""
    directory = subprocess.run(
        ["bash", str(GO_TOOL), "etcd"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return str(Path(directory) / "etcd")


def run_test(directory: Path, tmp_path: Path) -> None:
    etcd = EtcdCluster(directory, run_as=ETCD_UIDS, binary=etcd_with_the_lease_fix()).start()
    cluster = Cluster(tmp_path / "cluster", etcd, 3, settings={"cluster.name": unique_name("ef")})
    victim = cluster.brokers[2]
    proxies: list[TcpProxy] = []
    try:
        with contextlib.ExitStack() as stack:
            proxies = [
                stack.enter_context(proxy_to("127.0.0.1", m.client_port)) for m in etcd.members
            ]
            victim.settings["etcd.endpoints"] = ",".join(f"http://{p.address}" for p in proxies)
            cluster.start()
            topic = cluster.create_topic(PARTITIONS, 3, {"min.insync.replicas": "2"}, prefix="ef")
            load = Load(cluster, etcd, topic, tmp_path)
            with (
                producer_processes(cluster.bootstrap, topic, tmp_path) as processes,
                firewall() as rules,
            ):
                run_faults(load, etcd, rules, proxies)
                cluster.wait_until(lambda: cluster.fully_replicated(topic), "all in sync")
                time.sleep(1.0)
                for process in processes:
                    process.send_signal(signal.SIGTERM)
                exit_codes = [stop_producer(process) for process in processes]
            assert exit_codes == [0] * len(PRODUCERS), exit_codes
            check_load(cluster, topic, tmp_path)
    finally:
        cluster.close()
        etcd.kill()
        for member in etcd.members:  # kept with the brokers' logs for a post-mortem
            if member.log_path.exists():
                shutil.copy(member.log_path, tmp_path)


def run_faults(load: Load, etcd: EtcdCluster, rules: Firewall, proxies: list[TcpProxy]) -> None:
    cluster = load.cluster
    time.sleep(1.0)
    # Before anything rotates the brokers' endpoint order: the member they use first.
    # Member 0 may be the etcd leader (see renewals_allowed).
    load.assert_only_a_pause(
        "member 0 cut off from its peers",
        lambda: rules.cut_from_peers(etcd, 0),
        rules.heal,
        renewals_allowed=True,
    )
    for leader, how in ((False, "killed"), (True, "killed"), (True, "paused")):
        member = etcd.members[member_index(etcd, leader)]
        role = "leader" if leader else "follower"
        if how == "killed":
            load.assert_only_a_pause(f"etcd {role} killed", member.kill, member.start)
        else:
            load.assert_only_a_pause(
                f"etcd {role} paused",
                lambda m=member: m.process.signal(signal.SIGSTOP),  # type: ignore[misc]
                lambda m=member: m.process.signal(signal.SIGCONT),  # type: ignore[misc]
                renewals_allowed=True,
            )
    quorum_loss(load, etcd)
    broker_cut_off(load, proxies)
    cluster.wait_until(lambda: cluster.fully_replicated(load.topic), "all in sync")


def quorum_loss(load: Load, etcd: EtcdCluster) -> None:
    """Two members killed for three session timeouts: the brokers carry on meanwhile."""
    cluster = load.cluster
    cluster.wait_until(lambda: cluster.fully_replicated(load.topic), "in sync")
    before = load.snapshot()
    print(f"{time.strftime('%H:%M:%S')} quorum lost")
    lost = etcd.members[1:]
    for member in lost:
        member.kill()
    began, acked = time.monotonic(), load.acks()
    try:
        time.sleep(3 * SESSION_S)
        during = load.acks() - acked
        assert during > 0, "nothing acknowledged while etcd had no quorum"
        assert set(cluster.reachable()) == set(cluster.brokers)
        for node in cluster.brokers:
            led = {p.partition: p.leader for p in cluster.state(via=node).partitions
                   if p.topic == load.topic}  # fmt: skip
            assert led == {p: leader for p, (leader, _) in before[1].items()}, (node, led)
    finally:
        for member in lost:
            member.start()
    cluster.wait_until(lambda: load.acks() > acked + during, "acknowledgements after quorum")
    after = load.settled()
    assert after == before, f"quorum loss moved sessions or leaders: {before} -> {after}"
    print(f"quorum lost {time.monotonic() - began:.1f} s: {during} records acknowledged meanwhile")


def broker_cut_off(load: Load, proxies: list[TcpProxy]) -> None:
    """Broker 2 loses etcd but not the other brokers: the rest of the cluster replaces it;
    back, it registers again and rejoins every ISR."""
    cluster = load.cluster
    cluster.wait_until(lambda: cluster.fully_replicated(load.topic), "in sync")
    registered, _ = load.snapshot()
    for proxy in proxies:
        proxy.cut()
    try:
        cluster.wait_until(
            lambda: all(
                p.leader in (0, 1) and 2 not in p.isr
                for p in cluster.state(via=0).partitions
                if p.topic == load.topic
            ),
            "broker 2's leaderships and ISR places taken away",
            timeout=30,
        )
        acked = load.acks()
        cluster.wait_until(lambda: load.acks() > acked, "acknowledgements without broker 2")
    finally:
        for proxy in proxies:
            proxy.heal()
    cluster.wait_until(
        lambda: registrations(load.etcd, load.name).get(2, registered[2]) != registered[2],
        "broker 2 registered again",
    )
    cluster.wait_until(lambda: cluster.fully_replicated(load.topic), "broker 2 back in sync")
    with WireClient.to(cluster.brokers[2].bootstrap) as wire:
        assert wire.metadata(None).brokers, "broker 2 answers Metadata"


def check_load(cluster: Cluster, topic: str, workdir: Path) -> None:
    reports = [read_producer_report(workdir / f"{name}.report", name) for name in PRODUCERS]
    print({r.name: (len(r.acked), len(r.nacked)) for r in reports})
    stored = read_partitions(cluster.bootstrap, topic, PARTITIONS)

    check_durability(
        stored,
        [known_offsets(report) for report in reports],
        batch_producers(cluster.brokers[0].data_dir, topic),
    )
    check_acked_without_offset(stored, reports)
    assert_replicas_identical(cluster, topic, PARTITIONS)
