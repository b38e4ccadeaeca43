"""Run a real `odradek broker` as a subprocess on loopback, for integration tests.

`Broker` runs one broker as a subprocess on ports chosen at run time, with its
own data directory and a log file (stdout and stderr). It can be stopped
(SIGTERM, then SIGKILL), killed with SIGKILL and restarted on the same data
dir and ports, so clients reconnect to the same address.

Live brokers are tracked in ``LIVE_BROKERS`` so a failed test can show their
logs, and an ``atexit`` hook kills any that survive an interrupted session.
The fixtures live in conftest.py.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

READY_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 80
# What a process prints as it aborts, often above a long backtrace the tail shows instead.
_FATAL_MARKERS = ("panicked at", "memory allocation of", "Fatal Python error", "fatal runtime")
_ADDRESS_IN_USE_HINTS = ("address already in use", "errno 98")

LIVE_BROKERS: list[Broker] = []
_RECENT_PORTS_KEPT = 1000
_recent_ports: dict[int, None] = {}  # insertion-ordered: the oldest is dropped first


class BrokerStartError(RuntimeError):
    """The broker exited or did not become ready in time."""


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (bound, then closed).

    The kernel may hand out a port again as soon as it is closed, so two
    calls made before either port is bound (a broker's several listeners)
    could get the same one; none of the last ``_RECENT_PORTS_KEPT`` ports
    returned in this process is returned again.
    """
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port not in _recent_ports:
            break
    _recent_ports[port] = None
    if len(_recent_ports) > _RECENT_PORTS_KEPT:
        del _recent_ports[next(iter(_recent_ports))]
    return port


def odradek_command() -> list[str]:
    """The argv prefix that runs the `odradek` console script of this interpreter.

    The script next to ``sys.executable`` is preferred over ``PATH``: a pyenv
    shim on ``PATH`` adds hundreds of milliseconds to every start.
    """
    beside_python = Path(sys.executable).parent / "odradek"
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return [str(beside_python)]
    on_path = shutil.which("odradek")
    if on_path:
        return [on_path]
    return [sys.executable, "-c", "from odradek.cli.main import main; main()"]


def http_get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    """GET ``url``; returns (status, body) and never raises for an HTTP error status."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


class Broker:
    """One `odradek broker` subprocess with its data dir, ports and log file."""

    def __init__(
        self,
        workdir: Path,
        settings: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.log_path = workdir / "broker.log"
        self.settings = dict(settings or {})
        self.env = dict(env or {})
        self.extra_args = list(extra_args or [])
        self.port = free_port()
        self.http_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0

    # -- addresses -----------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``host:port`` for Kafka clients."""
        return f"127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def pid(self) -> int:
        assert self.process is not None, "broker not started"
        return self.process.pid

    def command(self) -> list[str]:
        """The full argv that starts this broker."""
        all_settings = {
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "log.dirs": str(self.data_dir),
            "http.listener": f"127.0.0.1:{self.http_port}",
            **self.settings,
        }
        argv = [*odradek_command(), "broker"]
        for key, value in all_settings.items():
            argv += ["--set", f"{key}={value}"]
        return argv + self.extra_args

    def environment(self) -> dict[str, str]:
        """The test runner's environment without its ODRADEK_* settings, plus ``env``."""
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("ODRADEK_")}
        return {**inherited, **self.env}

    # -- lifecycle -----------------------------------------------------------

    def start(self, wait: bool = True, timeout: float = READY_TIMEOUT_S) -> Broker:
        """Start the process (appending to the log file) and, by default, wait until ready.

        On the first start only, a port taken between choosing and binding is
        retried once with new ports.
        """
        assert not self.is_running(), "broker already running"
        first_start = self.process is None
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._spawn()
        if not wait:
            return self
        try:
            self.wait_ready(timeout)
        except BrokerStartError:
            if first_start and self._lost_port_race():
                self.port, self.http_port = free_port(), free_port()
                self._spawn()
                self.wait_ready(timeout)
            else:
                raise
        return self

    def _spawn(self) -> None:
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start: {' '.join(self.command())}\n".encode())
            log.flush()
            self.started_at = time.monotonic()
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.environment(),
                cwd=self.workdir,
                start_new_session=True,  # own process group: SIGKILL reaches any children
            )
        if self not in LIVE_BROKERS:
            LIVE_BROKERS.append(self)

    def _lost_port_race(self) -> bool:
        return not self.is_running() and any(
            hint in self.log_tail().lower() for hint in _ADDRESS_IN_USE_HINTS
        )

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def is_ready(self) -> bool:
        try:
            status, _ = http_get(f"{self.http_url}/readyz", timeout=1.0)
        except OSError:
            return False
        return status == 200

    def wait_ready(self, timeout: float = READY_TIMEOUT_S, poll_interval: float = 0.01) -> float:
        """Block until GET /readyz answers 200; returns seconds since the process started."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_running():
                code = self.process.returncode if self.process else None
                raise BrokerStartError(
                    f"broker exited with code {code} before becoming ready\n{self.describe()}"
                )
            if self.is_ready():
                return time.monotonic() - self.started_at
            time.sleep(poll_interval)
        raise BrokerStartError(
            f"broker not ready (GET /readyz != 200) within {timeout:.0f}s\n{self.describe()}"
        )

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; returns the exit code (None if never run)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self._kill_group()
                self.process.wait()
        self._kill_group()  # reap anything the broker left behind
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL the broker's process group: an unclean stop, no shutdown work."""
        if self.process is None:
            return
        self._kill_group()
        self.process.wait()

    def _kill_group(self) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def restart(self, *, clean: bool = True, timeout: float = READY_TIMEOUT_S) -> Broker:
        """Stop (SIGTERM if ``clean`` else SIGKILL) and start again on the same dir and ports."""
        if clean:
            self.stop()
        else:
            self.kill()
        return self.start(timeout=timeout)

    def close(self) -> None:
        """Stop the broker for good (idempotent)."""
        self.stop()
        if self in LIVE_BROKERS:
            LIVE_BROKERS.remove(self)

    # -- observation ---------------------------------------------------------

    def metrics_text(self) -> str:
        status, body = http_get(f"{self.http_url}/metrics")
        assert status == 200, f"/metrics answered {status}: {body[:500]}"
        return body

    def metric(self, name: str, **labels: str) -> float:
        return metric_sum(self.metrics_text(), name, **labels)

    def rss_bytes(self) -> int:
        """Resident memory of the broker process, from /proc."""
        return self._status_bytes("VmRSS")

    def address_space_bytes(self) -> int:
        """Virtual memory the broker process has mapped, from /proc."""
        return self._status_bytes("VmSize")

    def _status_bytes(self, field: str) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
        raise AssertionError(f"{field} not found")

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no log file)"
        return "\n".join(text.splitlines()[-lines:])

    def state(self) -> str:
        """``running (pid N)``, or how the process ended (exit code or signal)."""
        if self.process is None:
            return "not started"
        code = self.process.poll()
        if code is None:
            return f"running (pid {self.process.pid})"
        if code < 0:
            return f"killed by {signal.Signals(-code).name} (pid {self.process.pid})"
        return f"exited with code {code} (pid {self.process.pid})"

    def fatal_lines(self) -> list[str]:
        """The log's lines that say why the process aborted, if it says."""
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if any(m in line for m in _FATAL_MARKERS)]

    def describe(self) -> str:
        fatal = self.fatal_lines()
        return (
            f"broker {self.bootstrap} (http {self.http_port}, data {self.data_dir}): "
            f"{self.state()}\n"
            + (f"--- why it aborted ---\n{chr(10).join(fatal[:10])}\n" if fatal else "")
            + f"--- last {LOG_TAIL_LINES} lines of {self.log_path} ---\n{self.log_tail()}"
        )

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _kill_survivors() -> None:
    for broker in list(LIVE_BROKERS):
        if broker.process is not None and broker.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(broker.process.pid, signal.SIGKILL)


atexit.register(_kill_survivors)


class BrokerFactory(Protocol):
    """Makes a broker (started unless ``start=False``) that the fixture cleans up."""

    def __call__(
        self,
        settings: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: list[str] | None = None,
        start: bool = True,
    ) -> Broker: ...


def metric_sum(metrics_text: str, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` in Prometheus text whose labels include ``labels``."""
    total = 0.0
    for line in metrics_text.splitlines():
        if not line.startswith(name) or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        metric, _, label_text = head.partition("{")
        if metric == name and all(f'{k}="{v}"' in label_text for k, v in labels.items()):
            total += float(value)
    return total


def terminate_all(processes: Sequence[subprocess.Popen[bytes]], grace_s: float) -> None:
    """SIGTERM each process still running, then SIGKILL those not gone within ``grace_s``."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def unique_name(prefix: str) -> str:
    """A topic name no other test uses (tests share module brokers)."""
    return f"{prefix}-{os.getpid()}-{time.monotonic_ns()}"
