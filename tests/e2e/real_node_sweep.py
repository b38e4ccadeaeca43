"""Whatever a real cluster left on this machine, removed: after a clean stop as a
safety net, and before a start for a run that was killed before its clean-up.

Everything a real cluster starts lives in one directory (``RUN_DIR``), so what is left
is found by it: processes whose command line names it (control plane, kubelets,
containerd and its shims, CoreDNS, kube-proxy), processes in the nodes' pod cgroups
(the containers), mounts below it, the kubelets' links to container logs into it; then
the cgroups, kube-proxy's nftables tables, the host network's rules, address and
bridges, and the directory itself.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path

import host_network
import pod_cgroups

RUN_DIR = Path.home() / ".cache/odradek/real-nodes/run"
NODE_CGROUP_PREFIX = "odradek-e2e-"
KUBE_PROXY_TABLES = (("ip", "kube-proxy"), ("ip6", "kube-proxy"))
CONTAINER_LOG_LINKS = Path("/var/log/containers")


def _pids_naming(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _node_cgroups() -> list[str]:
    return [p.name for p in pod_cgroups.CGROUP_ROOT.glob(f"pids/{NODE_CGROUP_PREFIX}*")]


def _pids_in_cgroup(name: str) -> list[int]:
    group = pod_cgroups.CGROUP_ROOT / "pids" / name
    pids: list[int] = []
    for procs in group.rglob("cgroup.procs"):
        with contextlib.suppress(OSError):
            pids.extend(int(line) for line in procs.read_text().split())
    return pids


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _remove_log_links() -> None:
    if not CONTAINER_LOG_LINKS.is_dir():
        return
    for link in CONTAINER_LOG_LINKS.iterdir():
        if link.is_symlink() and os.readlink(link).startswith(str(RUN_DIR)):
            link.unlink(missing_ok=True)


def _unmount_under(directory: Path) -> None:
    """Unmount whatever is mounted at or below ``directory``, deepest first."""
    prefix = str(directory)
    with open("/proc/self/mountinfo") as mountinfo:
        points = [line.split()[4] for line in mountinfo]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        with contextlib.suppress(subprocess.SubprocessError):
            subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)


def sweep(bridges: tuple[str, ...]) -> None:
    _kill(_pids_naming(str(RUN_DIR)))
    for group in _node_cgroups():
        _kill(_pids_in_cgroup(group))
    _unmount_under(RUN_DIR)
    _remove_log_links()
    for group in _node_cgroups():
        pod_cgroups.remove(group)
    for family, table in KUBE_PROXY_TABLES:
        subprocess.run(["nft", "delete", "table", family, table], capture_output=True, check=False)
    host_network.tear_down(bridges)
    shutil.rmtree(RUN_DIR, ignore_errors=True)
