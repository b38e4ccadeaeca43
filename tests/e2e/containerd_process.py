"""One containerd with the CRI plugin, private to one real node (real_node.py).

Its own root, state, socket and CNI configuration, apart from the containerd Docker
may run. Settings this machine needs: ``restrict_oom_score_adj`` (no CAP_SYS_RESOURCE,
so no negative oom_score_adj), cgroupfs rather than systemd, the pod network
namespaces mounted under the state directory (so a clean-up finds them), and a local
pause image as the sandbox. Images come in from Docker (``docker save | ctr import``).
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from odradek.cli.child_process import ChildProcess

READY_TIMEOUT_S = 60.0
CNI_BIN_DIR = "/usr/lib/cni"
NAMESPACE = "k8s.io"
"""containerd's namespace for the CRI's images and containers."""
IMPORT_TIMEOUT_S = 600


def _config(root: Path, state: Path, socket: Path, cni_conf_dir: Path, sandbox: str) -> str:
    cri = 'plugins."io.containerd.grpc.v1.cri"'
    return f"""version = 2
root = "{root}"
state = "{state}"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
]

[grpc]
  address = "{socket}"

[ttrpc]
  address = "{socket}.ttrpc"

[{cri}]
  sandbox_image = "{sandbox}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

[{cri}.cni]
  bin_dir = "{CNI_BIN_DIR}"
  conf_dir = "{cni_conf_dir}"

[{cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[{cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[{cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
"""


class Containerd:
    """Start with ``start``; ``socket`` is the CRI endpoint a kubelet and crictl use."""

    def __init__(self, workdir: Path, cni_conf_dir: Path, sandbox_image: str, crictl: Path):
        self.socket = workdir / "containerd.sock"
        self.crictl = crictl
        config = workdir / "config.toml"
        workdir.mkdir(parents=True, exist_ok=True)
        root, state = workdir / "root", workdir / "state"
        config.write_text(_config(root, state, self.socket, cni_conf_dir, sandbox_image))
        self.process = ChildProcess(
            "containerd", ["containerd", "--config", str(config)], workdir / "containerd.log"
        )

    @property
    def endpoint(self) -> str:
        return f"unix://{self.socket}"

    def _ctr(self, *args: str, stdin: int | None = None) -> subprocess.CompletedProcess[bytes]:
        argv = ["ctr", "--address", str(self.socket), "--namespace", NAMESPACE, *args]
        return subprocess.run(
            argv, stdin=stdin, capture_output=True, check=False, timeout=IMPORT_TIMEOUT_S
        )

    def _answers(self) -> bool:
        return self.socket.exists() and self._ctr("version").returncode == 0

    def start(self) -> None:
        self.process.start()
        self.process.wait_ready(self._answers, READY_TIMEOUT_S)

    def import_image(self, image: str) -> None:
        """``image`` copied from Docker's store into this containerd's."""
        with subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE) as save:
            assert save.stdout is not None
            imported = self._ctr("images", "import", "-", stdin=save.stdout.fileno())
        if save.returncode != 0 or imported.returncode != 0:
            raise RuntimeError(f"importing {image}: {imported.stderr.decode(errors='replace')}")

    def remove_pods(self) -> None:
        """Every pod sandbox stopped and removed (their networks torn down through CNI)."""
        argv = [str(self.crictl), "--runtime-endpoint", self.endpoint, "rmp", "--all", "--force"]
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(argv, capture_output=True, check=False, timeout=120)

    def stop(self) -> None:
        if self.process.is_running():
            self.remove_pods()
        self.process.stop()
