"""The cgroup (v1, cgroupfs) a kubelet parents its pods under, one per node on this host."""

from __future__ import annotations

import contextlib
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CPUSET_FILES = ("cpuset.cpus", "cpuset.mems")


def _hierarchies() -> list[Path]:
    """One directory per mounted v1 hierarchy (cpu, memory, ...), the named ones left out."""
    return [p for p in CGROUP_ROOT.iterdir() if p.is_dir() and not p.is_symlink()]


def create(name: str) -> None:
    """``/<name>`` in every hierarchy; the kubelet refuses a cgroupRoot that does not exist."""
    for hierarchy in _hierarchies():
        group = hierarchy / name
        group.mkdir(exist_ok=True)
        if hierarchy.name == "cpuset":  # a new cpuset has no CPUs until given its parent's
            for file in CPUSET_FILES:
                (group / file).write_text((hierarchy / file).read_text())


def remove(name: str) -> None:
    """``/<name>`` and every cgroup under it, deepest first (their tasks must be gone)."""
    for hierarchy in _hierarchies():
        group = hierarchy / name
        if not group.is_dir():
            continue
        nested = sorted((p for p in group.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
        for directory in (*nested, group):
            with contextlib.suppress(OSError):
                directory.rmdir()
