from __future__ import annotations

from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.models import ClusterSpec


def parse(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_properties_hold_cluster_wide_settings_in_kafka_names() -> None:
    spec = ClusterSpec.model_validate(
        {"config": {"num.partitions": 6, "auto.create.topics.enable": "false"}}
    )
    props = parse(broker_properties("events", "prod", spec))
    assert props["cluster.name"] == "events"
    assert props["listeners"] == "PLAINTEXT://0.0.0.0:9092"
    assert props["http.listener"] == "0.0.0.0:9080"
    assert props["log.dirs"] == "/var/lib/odradek/data"
    assert props["num.partitions"] == "6"
    assert props["auto.create.topics.enable"] == "false"
    assert props["etcd.endpoints"] == ",".join(
        f"http://events-etcd-{i}.events-etcd.prod.svc:2379" for i in range(3)
    )


def test_external_etcd_endpoints_are_passed_through() -> None:
    spec = ClusterSpec.model_validate(
        {"coordination": {"external": {"endpoints": ["https://a:2379", "https://b:2379"]}}}
    )
    assert parse(broker_properties("c", "ns", spec))["etcd.endpoints"] == (
        "https://a:2379,https://b:2379"
    )


def test_per_pod_settings_are_left_to_the_environment() -> None:
    props = parse(broker_properties("c", "ns", ClusterSpec()))
    assert not {"node.id", "advertised.listeners", "broker.rack"} & set(props)


def test_rendering_is_deterministic_whatever_the_config_order() -> None:
    a = ClusterSpec.model_validate({"config": {"a.b": 1, "c.d": 2}})
    b = ClusterSpec.model_validate({"config": {"c.d": 2, "a.b": 1}})
    assert broker_properties("c", "ns", a) == broker_properties("c", "ns", b)
