"""Child processes on loopback for local clusters: spawn, probe, signal, stop.

A ``ChildProcess`` runs in its own session (process group), so a stop or a
kill reaches anything it started, and appends its output to a log file. Used
by ``odradek cluster up`` and by the integration tests' cluster harness.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

STOP_TIMEOUT_S = 10.0
LOG_TAIL_LINES = 40


class ProcessStartError(RuntimeError):
    """A child process exited early or did not become ready in time."""


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (bound, then closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback TCP ports, all bound at once so none repeats."""
    with contextlib.ExitStack() as stack:
        sockets = [
            stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            for _ in range(count)
        ]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def http_status(url: str, timeout: float = 1.0) -> int | None:
    """The HTTP status of GET ``url``, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, ValueError):
        return None


def wait_until(
    condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.1
) -> float:
    """Poll ``condition`` until it holds; returns the seconds it took.

    Raises ``TimeoutError`` naming ``what`` when it does not hold within ``timeout``.
    """
    started = time.monotonic()
    deadline = started + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        time.sleep(interval)
    return time.monotonic() - started


class ChildProcess:
    """One process started from ``argv``; its output goes to ``log_path``."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        if self.process is None:
            raise ProcessStartError(f"{self.name} was never started")
        return self.process.pid

    def start(self) -> None:
        """Spawn the process, appending to its log file."""
        if self.is_running():
            raise ProcessStartError(f"{self.name} is already running")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"\n=== start: {' '.join(self.argv)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_ready(self, is_ready: Callable[[], bool], timeout: float) -> float:
        """Wait until ``is_ready``; fails early, with the log tail, if the process exits."""

        def ready_or_exited() -> bool:
            if not self.is_running():
                code = self.process.returncode if self.process else None
                raise ProcessStartError(
                    f"{self.name} exited with code {code} before it was ready\n{self.log_tail()}"
                )
            return is_ready()

        try:
            return wait_until(ready_or_exited, timeout, f"{self.name} ready", interval=0.05)
        except TimeoutError as error:
            raise ProcessStartError(f"{error}\n{self.log_tail()}") from None

    def signal(self, signum: signal.Signals) -> None:
        """Send ``signum`` to the whole process group (SIGSTOP, SIGCONT, SIGKILL ...)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signum)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM (after SIGCONT, in case it is paused), then SIGKILL after ``timeout``.

        Returns the exit code; None if it never ran.
        """
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.signal(signal.SIGCONT)
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.process.wait()
        self.signal(signal.SIGKILL)  # whatever it left behind in its group
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL the process group and reap the process: a crash, no shutdown work."""
        if self.process is not None:
            self.signal(signal.SIGKILL)
            self.process.wait()

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return f"(no log at {self.log_path})"
        tail = "\n".join(text.splitlines()[-lines:])
        return f"--- last {lines} lines of {self.log_path} ---\n{tail}"
