"""The operator's broker settings against the broker's own configuration loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.models import ClusterSpec
from odradek.operator.pod_init import with_rack

SPEC = ClusterSpec.model_validate(
    {
        "config": {
            "num.partitions": 6,
            "default.replication.factor": 3,
            "auto.create.topics.enable": False,
        }
    }
)
POD_ENV = {
    "ODRADEK_NODE_ID": "2",
    "ODRADEK_ADVERTISED_LISTENERS": "PLAINTEXT://events-broker-2.events-brokers.prod.svc:9092",
}


def load(tmp_path: Path, properties: str) -> BrokerConfig:
    path = tmp_path / "broker.properties"
    path.write_text(properties)
    return BrokerConfig.load(path, environ=POD_ENV)


@pytest.mark.xfail(
    raises=ConfigError,
    strict=True,
    reason="the broker does not know cluster.name and etcd.endpoints yet",
)
def test_the_broker_accepts_the_operator_properties(tmp_path: Path) -> None:
    load(tmp_path, broker_properties("events", "prod", SPEC))


def test_the_broker_reads_per_pod_settings_from_the_environment(tmp_path: Path) -> None:
    shared = broker_properties("events", "prod", SPEC)
    known = "".join(
        line + "\n"
        for line in shared.splitlines()
        if not line.startswith(("cluster.name=", "etcd.endpoints="))
    )
    config = load(tmp_path, with_rack(known, "eu-west-1a"))
    assert config.node_id == 2
    assert config.get("broker.rack") == "eu-west-1a"
    assert config.get("num.partitions") == 6
    assert config.get("auto.create.topics.enable") is False
