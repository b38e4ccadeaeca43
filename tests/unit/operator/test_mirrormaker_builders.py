from __future__ import annotations

import yaml
from kubernetes_schemas import assert_valid

from odradek.operator.builders.meta import Owner
from odradek.operator.builders.mirrormaker import listener_of, mirror_objects
from odradek.operator.models import ClusterSpec, MirrorMakerSpec

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


def test_a_clusters_tls_listener_is_reached_trusting_its_ca() -> None:
    spec = MirrorMakerSpec.model_validate(
        {
            "source": {"alias": "east", "cluster": "events", "listener": "TLS"},
            "target": {"alias": "west", "cluster": "events"},
        }
    )
    events = ClusterSpec.model_validate(
        {"listeners": [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]}
    )
    objects = mirror_objects(OWNER, spec, {"events": events})
    for obj in objects:
        assert_valid(obj)
    config_map, deployment = objects
    config = yaml.safe_load(config_map["data"]["mirror.yaml"])
    assert config["source"]["bootstrapServers"] == "events-bootstrap.prod.svc:9093"
    assert config["source"]["config"] == {
        "security.protocol": "SSL",
        "ssl.ca.location": "/etc/odradek/ca/source/ca.crt",
    }
    assert config["target"] == {
        "alias": "west",
        "bootstrapServers": "events-bootstrap.prod.svc:9092",
        "config": {},
    }
    pod = deployment["spec"]["template"]["spec"]
    assert {"name": "source-ca", "secret": {"secretName": "events-cluster-ca-cert"}} in pod[
        "volumes"
    ]
    mount = {"name": "source-ca", "mountPath": "/etc/odradek/ca/source", "readOnly": True}
    assert mount in pod["containers"][0]["volumeMounts"]
    assert listener_of(events, "NONE") is None
