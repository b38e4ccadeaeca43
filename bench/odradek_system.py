"""Start Odradek for a benchmark: one broker (embedded metadata) or etcd + N brokers."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from running_system import READY_TIMEOUT_S, SHARED_SETTINGS, RunningSystem, wait_for_brokers
from secured_listener import PLAINTEXT, ListenerSecurity

from odradek.cli.child_process import ChildProcess, free_port, http_status
from odradek.cli.local_cluster import LocalCluster, odradek_argv


@contextmanager
def odradek_broker(
    workdir: Path,
    extra: Mapping[str, str] | None = None,
    security: ListenerSecurity = PLAINTEXT,
) -> Iterator[RunningSystem]:
    """One ``odradek broker`` on free loopback ports, ready on /readyz; stopped on exit."""
    port, inter_broker_port, http_port = free_port(), free_port(), free_port()
    data_dir = workdir / "data"
    settings = {
        **SHARED_SETTINGS,
        "listeners": ",".join(security.listeners(port, inter_broker_port)),
        **security.broker_settings(),
        "http.listener": f"127.0.0.1:{http_port}",
        "log.dirs": str(data_dir),
        **(extra or {}),
    }
    argv = [*odradek_argv(), "broker"]
    for key, value in settings.items():
        argv += ["--set", f"{key}={value}"]
    broker = ChildProcess("odradek broker", argv, workdir / "broker.log")
    bootstrap = f"127.0.0.1:{port}"
    started = time.monotonic()
    broker.start()
    try:
        ready_url = f"http://127.0.0.1:{http_port}/readyz"
        broker.wait_ready(lambda: http_status(ready_url) == 200, READY_TIMEOUT_S)
        wait_for_brokers(security.client_settings(bootstrap), 1)
        ready = time.monotonic() - started
        pids = (broker.pid,)
        yield RunningSystem(
            "odradek", bootstrap, pids, pids, ready, (data_dir,), security, (broker,)
        )
    finally:
        broker.stop()


@contextmanager
def odradek_cluster(
    workdir: Path, brokers: int, extra: Mapping[str, str] | None = None
) -> Iterator[RunningSystem]:
    """etcd and ``brokers`` brokers (``odradek cluster up``'s LocalCluster); stopped on exit."""
    settings = {**SHARED_SETTINGS, **(extra or {})}
    cluster = LocalCluster(workdir / "cluster", brokers, settings=settings)
    started = time.monotonic()
    try:
        cluster.start(READY_TIMEOUT_S)
        wait_for_brokers(PLAINTEXT.client_settings(cluster.bootstrap_servers), brokers)
        ready = time.monotonic() - started
        broker_pids = tuple(broker.process.pid for broker in cluster.brokers)
        yield RunningSystem(
            "odradek",
            cluster.bootstrap_servers,
            (*broker_pids, cluster.etcd.process.pid),
            broker_pids,
            ready,
            tuple(spec.data_dir for spec in cluster.specs),
            brokers=tuple(broker.process for broker in cluster.brokers),
        )
    finally:
        cluster.stop()
