"""The operator's broker settings against the broker's own configuration loader."""

from __future__ import annotations

from pathlib import Path

from odradek.broker.config.broker_config import BrokerConfig
from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.models import ClusterSpec
from odradek.operator.pod_init import with_rack

SPEC = ClusterSpec.model_validate(
    {
        "config": {
            "num.partitions": 6,
            "default.replication.factor": 3,
            "auto.create.topics.enable": "false",
        }
    }
)
POD_ENV = {
    "ODRADEK_NODE_ID": "2",
    "ODRADEK_ADVERTISED_LISTENERS": "PLAINTEXT://events-broker-2.events-brokers.prod.svc:9092",
}


def test_the_broker_loads_what_the_operator_gives_a_pod(tmp_path: Path) -> None:
    """ConfigMap properties + broker.rack from the init step + per-pod environment."""
    path = tmp_path / "broker.properties"
    path.write_text(with_rack(broker_properties("events", "prod", SPEC), "eu-west-1a"))
    config = BrokerConfig.load(path, environ=POD_ENV)
    assert config.node_id == 2
    assert config.get("broker.rack") == "eu-west-1a"
    assert config.get("cluster.name") == "events"
    assert config.get("num.partitions") == 6
    assert config.get("auto.create.topics.enable") is False
