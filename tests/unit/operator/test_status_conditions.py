from __future__ import annotations

from odradek.operator.planning.cluster_health import Activity, BrokerView, cluster_verdicts
from odradek.operator.planning.conditions import conditions, progressing, ready
from odradek.operator.planning.partitions import Partition


def by_type(verdicts: list) -> dict:  # type: ignore[type-arg]
    return {v.type: v for v in verdicts}


def test_conditions_carry_the_generation_they_describe() -> None:
    [c, *_] = conditions(ready("Reconciled", "ok"), 7, [], "T1")
    assert c == {
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "ok",
        "observedGeneration": 7,
        "lastTransitionTime": "T1",
    }


def test_transition_time_moves_only_when_the_status_flips() -> None:
    first = conditions(ready("Reconciled", "ok"), 1, [], "T1")
    same = conditions(ready("Reconciled", "still ok"), 2, first, "T2")
    assert same[0]["lastTransitionTime"] == "T1"
    flipped = conditions(progressing("RollingRestart", "restarting broker 1"), 3, same, "T3")
    assert flipped[0]["lastTransitionTime"] == "T3"


def brokers(*ready_ids: int, outdated: tuple[int, ...] = ()) -> list[BrokerView]:
    return [BrokerView(i, f"c-broker-{i}", None, i in ready_ids, i in outdated) for i in range(3)]


def test_cluster_is_ready_only_when_every_broker_is_current_and_in_sync() -> None:
    verdicts = by_type(cluster_verdicts(3, brokers(0, 1, 2), [], None))
    assert verdicts["Ready"].status and not verdicts["Progressing"].status


def test_an_outdated_broker_keeps_the_cluster_progressing() -> None:
    verdicts = by_type(cluster_verdicts(3, brokers(0, 1, 2, outdated=(1,)), [], None))
    assert not verdicts["Ready"].status and verdicts["Progressing"].status
    assert verdicts["Ready"].message == "2 of 3 brokers ready"


def test_under_replicated_partitions_mark_the_cluster_degraded() -> None:
    partitions = [Partition("t", 0, (0, 1), (0,))]
    verdicts = by_type(cluster_verdicts(3, brokers(0, 1, 2), partitions, None))
    assert verdicts["Degraded"].status and not verdicts["Ready"].status
    assert "1 partitions are under-replicated: t-0" in verdicts["Degraded"].message


def test_a_refusal_is_reported_as_degraded_and_not_progressing() -> None:
    activity = Activity("ScaleDownRefused", "cannot scale to 1 brokers", refused=True)
    verdicts = by_type(cluster_verdicts(1, brokers(0, 1, 2), [], activity))
    assert verdicts["Degraded"].status and not verdicts["Progressing"].status
    assert verdicts["Ready"].message == "cannot scale to 1 brokers"


def test_unknown_metadata_is_not_ready() -> None:
    verdicts = by_type(cluster_verdicts(3, brokers(0, 1, 2), None, None))
    assert verdicts["Ready"].reason == "MetadataUnavailable"
