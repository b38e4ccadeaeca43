"""The systems the benchmarks compare, each started by name: ``STARTERS[name](workdir,
nodes, security)`` is a context manager yielding the ready system."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from kafka_system import kafka_cluster
from odradek_system import odradek_broker, odradek_cluster
from running_system import RunningSystem
from secured_listener import ListenerSecurity

Starter = Callable[[Path, int, ListenerSecurity], AbstractContextManager[RunningSystem]]


def _start_odradek(
    workdir: Path, nodes: int, security: ListenerSecurity
) -> AbstractContextManager[RunningSystem]:
    if nodes == 1:
        return odradek_broker(workdir, security=security)
    return odradek_cluster(workdir, nodes)  # PLAINTEXT only: compare.py refuses the others


def _start_kafka(
    workdir: Path, nodes: int, security: ListenerSecurity
) -> AbstractContextManager[RunningSystem]:
    return kafka_cluster(workdir, nodes, security=security)


STARTERS: dict[str, Starter] = {"odradek": _start_odradek, "kafka": _start_kafka}
