"""The operator's broker settings against the broker's own configuration loader."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

from odradek.broker.cluster.peer_security import inter_broker_security
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.server.listener_security import listener_security
from odradek.operator.builders.broker_config import broker_properties
from odradek.operator.builders.broker_statefulset import broker_statefulset
from odradek.operator.builders.certificates import broker_dns_names, issue, new_ca
from odradek.operator.builders.meta import Owner
from odradek.operator.constants import BROKER_CERTS_DIR
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


def test_a_tls_broker_loads_its_certificate_and_replicates_with_it(tmp_path: Path) -> None:
    """A TLS Cluster's properties, the pod's environment as the StatefulSet gives it, and
    the certificate Secret as the operator fills it: the broker's own loaders take them."""
    spec = ClusterSpec.model_validate(
        {"listeners": [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]}
    )
    owner = Owner("Cluster", "events", "prod", "uid")
    now = datetime.datetime.now(datetime.UTC)
    ca = new_ca("events-cluster-ca", datetime.timedelta(days=30), now)
    pod = "events-broker-2"
    issued = issue(ca, pod, broker_dns_names("events", "prod", 2), datetime.timedelta(days=30), now)
    certs = tmp_path / "certs"
    certs.mkdir()
    (certs / "ca.crt").write_bytes(ca.cert_pem)
    (certs / f"{pod}.pem").write_bytes(issued.key_pem + issued.cert_pem)
    properties = broker_properties("events", "prod", spec).replace(BROKER_CERTS_DIR, str(certs))
    (tmp_path / "broker.properties").write_text(properties)
    [container] = broker_statefulset(owner, spec, "hash")["spec"]["template"]["spec"]["containers"]
    environment = {
        item["name"]: item["value"].replace("$(POD_NAME)", pod).replace("$(POD_NAMESPACE)", "prod")
        for item in container["env"]
        if "value" in item
    }
    environment["ODRADEK_SSL_KEYSTORE_LOCATION"] = environment[
        "ODRADEK_SSL_KEYSTORE_LOCATION"
    ].replace(BROKER_CERTS_DIR, str(certs))
    config = BrokerConfig.load(tmp_path / "broker.properties", environ=environment)

    assert [str(listener) for listener in config.advertised_listeners] == [
        f"{name}://{pod}.events-brokers.prod.svc:{port}"
        for name, port in (("PLAIN", 9092), ("TLS", 9093), ("REPLICATION", 9091))
    ]
    assert config.inter_broker_listener.name == "REPLICATION"
    peers = inter_broker_security(config)
    assert peers.ssl_context() is not None and peers.sasl_exchange() is None
    served = {
        listener.name: listener_security(config, listener, lambda *_: None, b"x")
        for listener in config.listeners
    }
    assert served["PLAIN"].tls is None
    assert served["TLS"].tls is not None
    assert served["REPLICATION"].tls is not None
    assert served["REPLICATION"].tls.context.verify_mode == ssl.CERT_REQUIRED
