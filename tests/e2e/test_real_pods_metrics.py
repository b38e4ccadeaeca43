"""Monitoring on real pods: a real Prometheus scrapes the broker pods as the Cluster's
ServiceMonitor describes (prometheus_process.py) and evaluates the chart's alert rules
against them. Every series a rule reads must exist with the labels it selects on, so a
renamed metric or label cannot leave an alert that never fires (the certificate alert's on
the TLS Cluster of test_real_pods_tls)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from e2e_kubectl import wait_for
from prometheus_process import Prometheus, chart_rule_groups, running_prometheus, why_not
from real_node import RealCluster
from real_pods import BOOTSTRAP, CLUSTER, NAMESPACE, run_client

pytestmark = pytest.mark.slow

SELECTOR = re.compile(r"[a-z_]+\{[^}]*\}")
"""A series selector in a rule's expression: a metric name and its label matchers."""
TLS_ONLY = {"OdradekCertificateNotRenewed"}
"""Rules on series only brokers with a TLS listener have: test_real_pods_tls checks them."""
LAGGING_GROUP = "lagging"
COMMIT_SOME = """
import sys
from confluent_kafka import Consumer, TopicPartition
consumer = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2],
                     "enable.auto.commit": False})
consumer.assign([TopicPartition(sys.argv[3], 0, 0)])
records = [consumer.poll(30) for _ in range(10)]
assert all(r is not None and r.error() is None for r in records), records
consumer.commit(records[-1], asynchronous=False)
consumer.close()
"""


def lag_behind(cluster: RealCluster, topic: str) -> None:
    """A group that committed the first 10 of 50 records of partition 0: a lag to report."""
    records = "\n".join(f"lag-{i}" for i in range(50))
    produce = ["kcat", "-b", BOOTSTRAP, "-P", "-t", topic, "-p", "0", "-X", "acks=all"]
    subprocess.run(cluster.client_argv(produce), input=records, text=True, check=True, timeout=60)
    run_client(cluster, sys.executable, "-c", COMMIT_SOME, BOOTSTRAP, LAGGING_GROUP, topic)


def targets_up(prometheus: Prometheus, job: str, count: int) -> list[dict[str, Any]] | None:
    targets = [t for t in prometheus.api("targets")["activeTargets"] if t["labels"]["job"] == job]
    up = [t for t in targets if t["health"] == "up"]
    return up if len(up) == count else None


def alert_rules(prometheus: Prometheus) -> list[dict[str, Any]]:
    return [rule for group in prometheus.api("rules")["groups"] for rule in group["rules"]]


def settled_rules(prometheus: Prometheus) -> list[dict[str, Any]] | None:
    """The rules, once each has been evaluated and none is pending or firing: a healthy
    cluster alerts on nothing. (An evaluation before every target was scraped can see
    part of the cluster, e.g. no active controller, and be pending for a moment.)"""
    rules = alert_rules(prometheus)
    evaluated = all(not rule["lastEvaluation"].startswith("0001-") for rule in rules)
    inactive = all(rule["state"] == "inactive" for rule in rules)
    return rules if rules and evaluated and inactive else None


def test_prometheus_scrapes_the_broker_pods_and_the_charts_alerts_read_real_series(
    real_cluster: RealCluster, events: str, tmp_path: Path
) -> None:
    if reason := why_not():
        pytest.fail(reason)
    groups = chart_rule_groups(real_cluster)
    lag_behind(real_cluster, "orders")
    pki = real_cluster.plane.pki
    workdir = real_cluster.workdir / "prometheus"
    with running_prometheus(
        workdir, real_cluster.kubectl, (pki.admin_cert, pki.admin_key), groups, NAMESPACE
    ) as prometheus:
        up: Callable[[str, int], Any] = functools.partial(targets_up, prometheus)
        brokers = wait_for("three broker targets up", lambda: up("brokers", 3), 60, 1)
        wait_for("three kubelets up", lambda: up("kubelets", 3), 60, 1)
        pods = sorted(target["labels"]["pod"] for target in brokers)
        assert pods == [f"{CLUSTER}-broker-{i}" for i in range(3)]
        assert {target["labels"]["namespace"] for target in brokers} == {NAMESPACE}

        rules = wait_for(
            "every rule evaluated and inactive",
            functools.partial(settled_rules, prometheus),
            60,
            1,
            lambda: json.dumps(alert_rules(prometheus), indent=1),
        )
        assert {rule["name"] for rule in rules} == {
            rule["alert"] for group in groups for rule in group["rules"]
        }
        for rule in rules:
            assert rule["health"] == "ok", rule
            if rule["name"] in TLS_ONLY:
                continue
            for selector in SELECTOR.findall(rule["query"]):
                count = functools.partial(prometheus.query, f"count({selector})")
                wait_for(f"series for {selector} ({rule['name']})", count, 60, 2)

        [controllers] = prometheus.query('sum(odradek_active_controller{pod=~".+-broker-[0-9]+"})')
        assert controllers["value"][1] == "1"
        lag = prometheus.query(f'odradek_consumer_lag{{group="{LAGGING_GROUP}"}}')
        assert [(s["metric"]["topic"], s["metric"]["partition"]) for s in lag] == [("orders", "0")]
        assert int(lag[0]["value"][1]) >= 40
