from __future__ import annotations

from pathlib import Path

import yaml
from kubernetes_schemas import assert_valid

from odradek.mirror.config import parse_config
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


def test_users_on_both_sides_lend_the_mirror_their_credentials_from_their_secrets(
    tmp_path: Path,
) -> None:
    """A SCRAM User on the source's SASL_SSL listener and a certificate User on the
    target's: the mirror's file names the Secrets' files, holds no password, and reads
    as the credentials once the Secrets are mounted where the Deployment mounts them."""
    spec = MirrorMakerSpec.model_validate(
        {
            "source": {"alias": "east", "cluster": "events", "listener": "SCRAM", "user": "m1"},
            "target": {"alias": "west", "cluster": "events", "listener": "MTLS", "user": "m2"},
        }
    )
    events = ClusterSpec.model_validate(
        {
            "listeners": [
                {
                    "name": "SCRAM",
                    "port": 9092,
                    "tls": True,
                    "authentication": {"type": "scram-sha-512"},
                },
                {"name": "MTLS", "port": 9093, "tls": True, "authentication": {"type": "tls"}},
            ]
        }
    )
    config_map, deployment = mirror_objects(OWNER, spec, {"events": events})
    assert_valid(deployment)
    text = config_map["data"]["mirror.yaml"]
    config = yaml.safe_load(text)
    assert config["source"]["config"] == {
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": "/etc/odradek/ca/source/ca.crt",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "${directory:/etc/odradek/users/source:username}",
        "sasl.password": "${directory:/etc/odradek/users/source:password}",
    }
    assert config["target"]["config"] == {
        "security.protocol": "SSL",
        "ssl.ca.location": "/etc/odradek/ca/target/ca.crt",
        "ssl.certificate.location": "/etc/odradek/users/target/user.crt",
        "ssl.key.location": "/etc/odradek/users/target/user.key",
    }
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert volumes == {
        "source-ca": "events-cluster-ca-cert",
        "source-user": "m1",
        "target-ca": "events-cluster-ca-cert",
        "target-user": "m2",
    }
    mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    assert mounts["source-user"] == "/etc/odradek/users/source"

    # the Secret of m1 as the kubelet mounts it: one file per key
    users = tmp_path / "users"
    (users / "source").mkdir(parents=True)
    (users / "source" / "username").write_text("m1")
    (users / "source" / "password").write_text("s3cret")
    loaded = parse_config(yaml.safe_load(text.replace("/etc/odradek/users", str(users))))
    assert loaded.source.client_config["sasl.username"] == "m1"
    assert loaded.source.client_config["sasl.password"] == "s3cret"
    assert "s3cret" not in repr(loaded)
