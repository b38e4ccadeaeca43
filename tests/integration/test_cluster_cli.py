"""``odradek cluster up`` and ``odradek cluster status`` as a user runs them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from broker_process import odradek_command
from certificates import certificate_authority, issue
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_clients import BEGINNING, ConfluentClient, OutRecord

from odradek.cli.child_process import wait_until
from odradek.cli.etcd_process import leader_among

START_TIMEOUT_S = 90.0


@dataclass(frozen=True)
class EtcdMember:
    """A row of the etcd table ``cluster up`` prints."""

    name: str
    pid: int
    url: str


@dataclass
class UpProcess:
    """A running ``odradek cluster up`` and what it printed about itself."""

    process: subprocess.Popen[str]
    bootstrap: str = ""
    data_dir: Path = Path()
    broker_pids: dict[int, int] = field(default_factory=dict)
    etcd_members: list[EtcdMember] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def pids(self) -> list[int]:
        return [*self.broker_pids.values(), *(member.pid for member in self.etcd_members)]


def _read_until_started(up: UpProcess) -> None:
    assert up.process.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    process_rows = False
    while time.monotonic() < deadline:
        line = up.process.stdout.readline()
        if not line:
            raise AssertionError("cluster up ended early:\n" + "".join(up.lines))
        up.lines.append(line)
        if line.startswith("Bootstrap servers: "):
            up.bootstrap = line.split(": ", 1)[1].strip()
        elif line.startswith("Data: "):
            up.data_dir = Path(line.split()[1])
        elif line.startswith("ID PID"):
            process_rows = True
        elif member := re.match(r"(\S+)\s+(\d+)\s+(https?://\S+)\s", line):
            up.etcd_members.append(EtcdMember(member[1], int(member[2]), member[3]))
        elif process_rows and (row := re.match(r"(\d+)\s+(\d+)\s", line)):
            up.broker_pids[int(row[1])] = int(row[2])
        elif line.startswith("Press Ctrl-C"):
            return
    raise AssertionError("cluster up did not finish starting:\n" + "".join(up.lines))


def _ours(pid: int, data_dir: Path) -> bool:
    """A process still running from this cluster's data dir (not a recycled pid)."""
    try:
        return str(data_dir) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


@contextlib.contextmanager
def cluster_up(*options: str) -> Iterator[UpProcess]:
    """Runs ``odradek cluster up``; on the way out stops it and kills any process it left."""
    process = subprocess.Popen(
        [*odradek_command(), "cluster", "up", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("ODRADEK_")},
        start_new_session=True,
    )
    up = UpProcess(process)
    try:
        _read_until_started(up)
        yield up
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pid in up.pids():
            if _ours(pid, up.data_dir):
                os.killpg(pid, signal.SIGKILL)


def status(bootstrap: str) -> str:
    result = subprocess.run(
        [*odradek_command(), "cluster", "status", "--bootstrap-server", bootstrap, "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_cluster_up_runs_brokers_in_racks_until_sigterm_and_status_reports_failures() -> None:
    with cluster_up("--brokers", "3", "--racks", "a,b,c") as up:
        assert len(up.bootstrap.split(",")) == 3
        assert sorted(up.broker_pids) == [0, 1, 2]
        assert up.data_dir.is_dir()

        admin = AdminClient({"bootstrap.servers": up.bootstrap, "log_level": 0})
        # No replication factor given: the local cluster's default is three copies.
        admin.create_topics([NewTopic("orders", 3)])["orders"].result(timeout=30)
        report = status(up.bootstrap)
        brokers = re.findall(r"^(\d)\s+127\.0\.0\.1:\d+\s+([abc])\s", report, re.MULTILINE)
        assert brokers == [("0", "a"), ("1", "b"), ("2", "c")], report
        assert re.search(r"controller [012], 3 partition", report), report
        assert "Offline partitions: none" in report, report

        os.killpg(up.broker_pids[2], signal.SIGKILL)

        def under_replicated() -> bool:
            text = status(up.bootstrap.split(",")[0])
            return "Under-replicated partitions: 3" in text and "\n2 " not in text

        wait_until(under_replicated, 30, "status shows broker 2 gone")
        up.process.send_signal(signal.SIGTERM)
        assert up.process.wait(60) == 0
        assert up.process.stdout is not None
        rest = up.process.stdout.read()
        assert "broker 2 exited with code -9" in rest, rest
        assert "cluster stopped" in rest, rest
        assert not any(_ours(pid, up.data_dir) for pid in up.broker_pids.values())
        assert not up.data_dir.exists(), "the temporary data dir was not removed"


@pytest.mark.slow
def test_cluster_up_serves_etcd_over_tls_to_brokers_showing_their_client_certificate(
    tmp_path: Path,
) -> None:
    ca = certificate_authority()
    (tmp_path / "ca.pem").write_bytes(ca.cert_pem)
    etcd = issue(ca, "etcd")
    (tmp_path / "etcd.crt").write_bytes(etcd.cert_pem)
    (tmp_path / "etcd.key").write_bytes(etcd.key_pem)
    issue(ca, "broker").write_pem(tmp_path / "broker.pem")
    tls = (
        f"--etcd-cert-file={tmp_path / 'etcd.crt'}",
        f"--etcd-key-file={tmp_path / 'etcd.key'}",
        f"--etcd-trusted-ca-file={tmp_path / 'ca.pem'}",
        f"--etcd-client-keystore={tmp_path / 'broker.pem'}",
    )
    with cluster_up("--brokers", "2", *tls) as up:
        endpoint = next(line for line in up.lines if line.startswith("etcd: ")).split()[1]
        assert endpoint.startswith("https://127.0.0.1:"), up.lines
        admin = AdminClient({"bootstrap.servers": up.bootstrap, "log_level": 0})
        admin.create_topics([NewTopic("over-tls", 2)])["over-tls"].result(timeout=30)
        assert "Offline partitions: none" in status(up.bootstrap)
        # etcd takes no client without a certificate its CA signed
        anonymous = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        with pytest.raises((ssl.SSLError, ConnectionError, urllib.error.URLError)):
            urllib.request.urlopen(f"{endpoint}/health", timeout=5, context=anonymous).read()
        showing = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        showing.load_cert_chain(tmp_path / "broker.pem")
        with urllib.request.urlopen(f"{endpoint}/health", timeout=5, context=showing) as health:
            assert json.loads(health.read())["health"] == "true"


def refusal(*options: str) -> str:
    """What ``odradek cluster up`` with ``options`` says as it refuses them (exit status 1)."""
    result = subprocess.run(
        [*odradek_command(), "cluster", "up", *options],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result
    return result.stderr.strip()


def test_cluster_up_refuses_part_of_the_etcd_tls_options(tmp_path: Path) -> None:
    said = refusal(f"--etcd-cert-file={tmp_path}")
    assert said.endswith(
        "etcd over TLS needs --etcd-key-file, --etcd-trusted-ca-file, --etcd-client-keystore"
        " as well"
    ), said


@pytest.mark.slow
def test_cluster_up_with_three_etcd_members_keeps_serving_after_the_etcd_leader_is_killed() -> None:
    with cluster_up("--brokers", "3", "--etcd-members", "3") as up:
        endpoints = next(line for line in up.lines if line.startswith("etcd: ")).split()[1]
        assert endpoints.split(",") == [member.url for member in up.etcd_members], up.lines
        assert [member.name for member in up.etcd_members] == ["etcd0", "etcd1", "etcd2"]
        admin = AdminClient({"bootstrap.servers": up.bootstrap, "log_level": 0})
        admin.create_topics([NewTopic("events", 1, 3)])["events"].result(timeout=30)
        client = ConfluentClient()
        records = [OutRecord(b"k", f"v{i}".encode()) for i in range(5)]
        assert client.produce(up.bootstrap, "events", 0, records, acks="all") == [0, 1, 2, 3, 4]
        consumed = client.consume(up.bootstrap, "events", 0, BEGINNING, 5)
        assert [record.value for record in consumed] == [record.value for record in records]

        index = leader_among([member.url for member in up.etcd_members])
        assert index is not None, "no etcd member leads"
        leader = up.etcd_members[index]
        os.killpg(leader.pid, signal.SIGKILL)
        # Gone from /proc once cluster up has reaped it, which is when it reports the exit.
        wait_until(lambda: not Path(f"/proc/{leader.pid}").exists(), 10, "etcd member reaped")

        report = status(up.bootstrap)
        assert re.search(r"3 broker\(s\), controller [012]", report), report
        assert "Offline partitions: none" in report, report
        assert client.produce(up.bootstrap, "events", 0, records[:1], acks="all") == [5]
        up.process.send_signal(signal.SIGTERM)
        assert up.process.wait(60) == 0
        assert up.process.stdout is not None
        rest = up.process.stdout.read()
        assert f"etcd member {leader.name} exited with code -9" in rest, rest
        assert not any(_ours(pid, up.data_dir) for pid in up.pids())


def test_cluster_up_refuses_etcd_tls_with_several_etcd_members(tmp_path: Path) -> None:
    said = refusal("--etcd-members", "3", f"--etcd-cert-file={tmp_path}")
    assert said.endswith(
        "--etcd-cert-file cannot be used with --etcd-members 3:"
        " only a single etcd member serves TLS"
    ), said


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--etcd-members", "1"), "holds 3 etcd member(s): use --etcd-members 3"),
        (("--etcd-members", "3"), "use the --base-port they were started with"),
    ],
    ids=["another member count", "no base port"],
)
def test_cluster_up_refuses_a_data_dir_its_etcd_members_cannot_restart_from(
    tmp_path: Path, options: tuple[str, ...], message: str
) -> None:
    for member in range(3):
        (tmp_path / "etcd" / f"etcd{member}" / "member").mkdir(parents=True)
    said = refusal(f"--data-dir={tmp_path}", *options)
    assert said.endswith(message), said
