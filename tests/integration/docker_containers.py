"""Docker for the image tests: the engine (started, or the reason it cannot run), the
project's images (built by images/build.sh, reusing Docker's layer cache and the cached
local base), and containers and volumes that are always removed.

Everything a test creates goes through one ``Containers`` and carries the label
``odradek.test``; ``Containers.close`` removes what it made whatever happened, and an
``atexit`` hook removes it after an interrupted session too. Built images are kept: the
next run reuses them.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABEL = "odradek.test"
DOCKER_TIMEOUT_S = 120
BUILD_TIMEOUT_S = 1800
ENGINE_TIMEOUT_S = 600  # apt-get install docker.io on a fresh machine
LOG_TAIL_LINES = 60


class DockerUnavailable(RuntimeError):
    """No Docker Engine can run on this machine; the message says why."""


def run_command(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run to completion, whatever the exit status; output captured as text."""
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def docker(*arguments: str, timeout: float = DOCKER_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run the docker client to completion, whatever its exit status."""
    return run_command(["docker", *arguments], timeout)


def docker_ok(*arguments: str, timeout: float = DOCKER_TIMEOUT_S) -> str:
    """Run the docker client; its standard output. A failure raises with what it printed."""
    done = docker(*arguments, timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(
            f"docker {' '.join(arguments)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def ensure_engine() -> None:
    """Install and start Docker when needed (scripts/docker-engine.sh)."""
    done = run_command(["bash", str(ROOT / "scripts/docker-engine.sh")], ENGINE_TIMEOUT_S)
    if done.returncode != 0:
        raise DockerUnavailable(f"no Docker Engine can run here: {done.stderr.strip()}")


def build_image(name: str) -> str:
    """Build images/<name> with images/build.sh (cached layers make a warm build quick);
    the built tag."""
    build = ["nice", "-n", "19", "bash", str(ROOT / "images/build.sh"), name]
    done = run_command(build, BUILD_TIMEOUT_S)
    if done.returncode != 0:
        raise AssertionError(f"images/build.sh {name} failed:\n{done.stderr[-6000:]}")
    return done.stdout.strip().splitlines()[-1]


@dataclass
class Containers:
    """The containers and volumes of one test module; ``close`` removes them all."""

    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    containers: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        atexit.register(self.close)

    def volume(self) -> str:
        name = f"odradek-test-{self.run_id}-{len(self.volumes)}"
        docker_ok("volume", "create", "--label", f"{LABEL}={self.run_id}", name)
        self.volumes.append(name)
        return name

    def run(self, *arguments: str) -> str:
        """``docker run --detach`` with the label; the container's name."""
        name = f"odradek-test-{self.run_id}-c{len(self.containers)}"
        self.containers.append(name)
        docker_ok(
            "run", "--detach", "--name", name, "--label", f"{LABEL}={self.run_id}", *arguments
        )
        return name

    def run_to_end(
        self, *arguments: str, timeout: float = DOCKER_TIMEOUT_S
    ) -> subprocess.CompletedProcess[str]:
        """``docker run`` in the foreground, to the container's exit (removed by ``close``)."""
        name = f"odradek-test-{self.run_id}-c{len(self.containers)}"
        self.containers.append(name)
        return docker(
            "run", "--name", name, "--label", f"{LABEL}={self.run_id}", *arguments, timeout=timeout
        )

    def close(self) -> None:
        if self.containers:
            docker("rm", "--force", "--volumes", *self.containers)
            self.containers.clear()
        if self.volumes:
            docker("volume", "rm", "--force", *self.volumes)
            self.volumes.clear()


def inspect(container: str) -> dict[str, object]:
    data: list[dict[str, object]] = json.loads(docker_ok("inspect", container))
    return data[0]


def started_at(container: str) -> float:
    """When the container's process started, as a time.time() value (host clock)."""
    state = inspect(container)["State"]
    assert isinstance(state, dict)
    text = str(state["StartedAt"])  # RFC 3339 with nanoseconds
    seconds, _, fraction = text.rstrip("Z").partition(".")
    start = datetime.fromisoformat(seconds + "+00:00").timestamp()
    return start + float(f"0.{fraction or 0}")


def logs(container: str) -> str:
    done = docker("logs", "--tail", str(LOG_TAIL_LINES), container)
    return done.stdout + done.stderr


def is_running(container: str) -> bool:
    state = inspect(container)["State"]
    assert isinstance(state, dict)
    return bool(state["Running"])


def wait_for_log(container: str, text: str, timeout: float) -> str:
    """Wait until the container's log shows ``text``; the log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        output = logs(container)
        if text in output:
            return output
        time.sleep(0.2)
    raise AssertionError(
        f"{text!r} not in the log of {container} within {timeout}s:\n{logs(container)}"
    )
