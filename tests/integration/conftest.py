"""Fixtures that start real `odradek broker` processes (see broker_process.py).

- ``broker``: one running broker shared by the tests of a module.
- ``broker_factory``: ``broker_factory(settings={...}, env={...}, start=True)``
  makes brokers owned by one test.
- ``group_broker`` and ``spawn``: a broker with quick group settings and group members
  as processes (group_members.py), for the consumer group tests.
- ``etcd``: a real etcd on free loopback ports; ``cluster_factory(brokers=3,
  racks=(...), settings={...})`` makes started clusters on it (cluster_harness.py);
  ``secured_cluster_factory`` the same secured end to end (secured_cluster.py).

Every broker made here is stopped at teardown (SIGTERM, then SIGKILL) and its
directory removed, even when the test fails. A failed test's report carries
the log tail of every broker still live.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from broker_process import LIVE_BROKERS, Broker, BrokerFactory
from cluster_harness import ClusterFactory, cluster_pool, running_etcd
from group_members import GROUP_SETTINGS, MemberFactory, started_members
from secured_cluster import secured_cluster_pool

from odradek.cli.etcd_process import EtcdProcess


@contextlib.contextmanager
def _broker_pool(base_dir: Path) -> Iterator[BrokerFactory]:
    brokers: list[Broker] = []

    def make(
        settings: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        extra_args: list[str] | None = None,
        start: bool = True,
    ) -> Broker:
        workdir = Path(tempfile.mkdtemp(prefix=f"broker{len(brokers)}-", dir=base_dir))
        broker = Broker(workdir, settings=settings, env=env, extra_args=extra_args)
        brokers.append(broker)
        LIVE_BROKERS.append(broker)
        if start:
            broker.start()
        return broker

    try:
        yield make
    finally:
        for broker in brokers:
            broker.close()
        shutil.rmtree(base_dir, ignore_errors=True)


@pytest.fixture
def broker_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerFactory]:
    """Makes brokers owned by one test; all are stopped and their dirs removed afterwards."""
    with _broker_pool(tmp_path_factory.mktemp("brokers")) as make:
        yield make


@pytest.fixture(scope="module")
def module_broker_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerFactory]:
    """Makes brokers (with settings of their own) shared by the tests of one module."""
    with _broker_pool(tmp_path_factory.mktemp("module-brokers")) as make:
        yield make


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """A running broker with default settings, shared by the tests of one module."""
    with _broker_pool(tmp_path_factory.mktemp("shared-broker")) as make:
        yield make()


@pytest.fixture(scope="module")
def group_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """A broker with quick group settings for a module's group tests (their groups and
    topics are unique; none restarts it)."""
    with Broker(tmp_path_factory.mktemp("group-broker"), settings=GROUP_SETTINGS) as broker:
        yield broker.start()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[MemberFactory]:
    """Starts group members (group_members.py); all are killed at teardown."""
    yield from started_members(tmp_path)


@pytest.fixture
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdProcess]:
    """A running etcd owned by one test; killed and its data removed afterwards."""
    if shutil.which("etcd") is None:
        pytest.skip("etcd is not installed (apt-get install etcd-server)")
    with running_etcd(tmp_path_factory.mktemp("etcd")) as process:
        yield process


@pytest.fixture
def cluster_factory(
    etcd: EtcdProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ClusterFactory]:
    """Makes started clusters on ``etcd``; every broker is killed and its dir removed after."""
    with cluster_pool(tmp_path_factory.mktemp("clusters"), etcd) as make:
        yield make


@pytest.fixture
def secured_cluster_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterFactory]:
    """Like ``cluster_factory``, but every listener is SASL_SSL (between brokers, SCRAM-SHA-512)
    or SSL with client certificates, and etcd is reached over mutual TLS (secured_cluster.py)."""
    if shutil.which("etcd") is None:
        pytest.skip("etcd is not installed (apt-get install etcd-server)")
    with secured_cluster_pool(tmp_path_factory.mktemp("secured")) as (make, _):
        yield make


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    """Attach the log tail of every live broker to a failed test's report."""
    report = yield
    if report.failed:
        for live in LIVE_BROKERS:
            report.sections.append((f"broker log {live.bootstrap}", live.describe()))
    return report
