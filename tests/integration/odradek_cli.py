"""Running the ``odradek`` command as a user would, in a subprocess."""

from __future__ import annotations

import os
import subprocess

from broker_process import odradek_command

COMMAND_TIMEOUT_S = 60.0


def odradek(
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    expect: int = 0,
) -> subprocess.CompletedProcess[str]:
    """Run ``odradek ARGS``; assert its exit code is ``expect`` and it printed no traceback."""
    completed = subprocess.run(
        [*odradek_command(), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert completed.returncode == expect, (
        f"odradek {' '.join(args)} exited {completed.returncode}, expected {expect}\n"
        f"stdout: {completed.stdout}\nstderr: {completed.stderr}"
    )
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed
