from __future__ import annotations

import yaml
from kubernetes_schemas import assert_valid

from odradek.operator.builders.meta import Owner
from odradek.operator.builders.mirrormaker import mirror_objects
from odradek.operator.models import MirrorMakerSpec

OWNER = Owner(kind="MirrorMaker", name="dr", namespace="prod", uid="42")
SPEC = MirrorMakerSpec.model_validate(
    {
        "source": {"alias": "east", "cluster": "events"},
        "target": {
            "alias": "west",
            "bootstrapServers": "west.example.com:9092",
            "config": {"security.protocol": "SSL"},
        },
        "topics": {"include": ["orders.*"], "exclude": [".*internal"]},
        "replicas": 2,
        "resources": {"requests": {"cpu": "100m"}},
    }
)


def test_mirror_objects_validate_strictly() -> None:
    for obj in mirror_objects(OWNER, SPEC):
        assert_valid(obj)


def test_deployment_runs_odradek_mirror_with_its_config() -> None:
    config_map, deployment = mirror_objects(OWNER, SPEC)
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["mirror", "--config", "/etc/odradek/mirror.yaml"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert (
        deployment["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"]
        == (config_map["metadata"]["name"])
    )


def test_mirror_config_resolves_a_cluster_reference_to_its_bootstrap_service() -> None:
    config_map, _ = mirror_objects(OWNER, SPEC)
    config = yaml.safe_load(config_map["data"]["mirror.yaml"])
    assert config["source"] == {
        "alias": "east",
        "config": {},
        "bootstrapServers": "events-bootstrap.prod.svc:9092",
    }
    assert config["target"]["bootstrapServers"] == "west.example.com:9092"
    assert config["target"]["config"] == {"security.protocol": "SSL"}
    assert config["naming"] == "prefix"
    assert config["topics"] == {"include": ["orders.*"], "exclude": [".*internal"]}
    assert "image" not in config
