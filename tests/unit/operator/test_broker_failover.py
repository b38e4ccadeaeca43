from __future__ import annotations

from datetime import UTC, datetime, timedelta

from odradek.operator.planning.failover import BrokerPod, NodeHealth, Replacement, plan_failover

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
GRACE = timedelta(minutes=5)
HEALTHY = {
    "n1": NodeHealth(True, NOW - timedelta(days=1)),
    "n2": NodeHealth(True, NOW - timedelta(days=1)),
}


def test_healthy_brokers_are_left_alone() -> None:
    pods = [BrokerPod(0, "n1", None), BrokerPod(1, "n2", "n2")]
    assert plan_failover(pods, HEALTHY, NOW, GRACE) is None


def test_a_node_not_ready_within_the_grace_period_is_waited_for() -> None:
    nodes = {**HEALTHY, "n2": NodeHealth(False, NOW - timedelta(minutes=2))}
    assert plan_failover([BrokerPod(1, "n2", None)], nodes, NOW, GRACE) is None


def test_network_volume_broker_on_a_lost_node_is_rescheduled_keeping_its_claim() -> None:
    nodes = {**HEALTHY, "n2": NodeHealth(False, NOW - timedelta(minutes=10))}
    replacement = plan_failover([BrokerPod(1, "n2", None)], nodes, NOW, GRACE)
    assert replacement is not None and replacement.broker == 1
    assert not replacement.delete_claim
    assert "node n2 has not been ready since" in replacement.reason


def test_local_volume_on_a_deleted_node_is_replaced_with_its_claim() -> None:
    pods = [BrokerPod(2, None, "gone", unschedulable_since=NOW - timedelta(minutes=6))]
    assert plan_failover(pods, HEALTHY, NOW, GRACE) == Replacement(
        2, delete_claim=True, reason="broker 2: its volume is on node gone, which no longer exists"
    )


def test_a_pending_broker_is_replaced_only_after_the_grace_period() -> None:
    pods = [BrokerPod(2, None, "gone", unschedulable_since=NOW - timedelta(minutes=1))]
    assert plan_failover(pods, HEALTHY, NOW, GRACE) is None


def test_only_one_broker_is_replaced_per_pass() -> None:
    pods = [BrokerPod(1, "lost", "lost"), BrokerPod(0, "lost", "lost")]
    replacement = plan_failover(pods, HEALTHY, NOW, GRACE)
    assert replacement is not None and replacement.broker == 0 and replacement.delete_claim
