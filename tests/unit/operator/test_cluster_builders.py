from __future__ import annotations

from typing import Any

import pytest
from kubernetes_schemas import assert_valid

from odradek.operator.builders.cluster import cluster_objects
from odradek.operator.builders.meta import Owner
from odradek.operator.builders.services import external_service
from odradek.operator.constants import CONFIG_HASH_ANNOTATION, POD_INDEX_LABEL
from odradek.operator.models import ClusterSpec
from odradek.operator.models.cluster import Listener

OWNER = Owner(kind="Cluster", name="events", namespace="prod", uid="1234")

SPECS = {
    "defaults": {},
    "everything": {
        "replicas": 5,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "storage": {"size": "100Gi", "storageClassName": "fast", "deleteClaim": True},
        "rack": {},
        "config": {"min.insync.replicas": 2, "auto.create.topics.enable": "false"},
        "coordination": {"managed": {"replicas": 5, "storage": {"type": "ephemeral"}}},
        "listeners": [
            {"name": "PLAINTEXT", "port": 9092},
            {"name": "TLS", "port": 9093, "tls": True},
        ],
        "metrics": {"serviceMonitor": True, "prometheusRule": True},
        "template": {
            "labels": {"team": "data"},
            "annotations": {"note": "x"},
            "nodeSelector": {"pool": "kafka"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "pool", "operator": "In", "values": ["kafka"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "kafka", "effect": "NoSchedule"}
            ],
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ],
            "priorityClassName": "high",
            "securityContext": {"runAsUser": 2000, "runAsNonRoot": True},
            "containerSecurityContext": {"readOnlyRootFilesystem": True},
        },
    },
    "ephemeral-external-etcd": {
        "replicas": 1,
        "storage": {"type": "ephemeral", "size": "1Gi"},
        "coordination": {"external": {"endpoints": ["http://etcd-0:2379", "http://etcd-1:2379"]}},
    },
}


def build(spec: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    objects = cluster_objects(OWNER, ClusterSpec.model_validate(spec))
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def broker_pod(spec: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = build(spec)["StatefulSet", "events-broker"]["spec"]["template"]
    return pod


@pytest.mark.parametrize("name", SPECS)
def test_every_object_validates_strictly_against_kubernetes_schemas(name: str) -> None:
    for obj in build(SPECS[name]).values():
        assert_valid(obj)


@pytest.mark.parametrize("name", SPECS)
def test_namespaced_objects_are_owned_by_the_cluster(name: str) -> None:
    for (kind, _), obj in build(SPECS[name]).items():
        if kind == "ClusterRoleBinding":
            assert "ownerReferences" not in obj["metadata"]
            continue
        assert obj["metadata"]["namespace"] == "prod"
        [ref] = obj["metadata"]["ownerReferences"]
        assert ref == {
            "apiVersion": "odradek.io/v1alpha1",
            "kind": "Cluster",
            "name": "events",
            "uid": "1234",
            "controller": True,
            "blockOwnerDeletion": True,
        }


def test_default_cluster_has_the_documented_objects() -> None:
    assert set(build({})) == {
        ("ServiceAccount", "events-broker"),
        ("Service", "events-etcd"),
        ("StatefulSet", "events-etcd"),
        ("PodDisruptionBudget", "events-etcd"),
        ("ConfigMap", "events-config"),
        ("Service", "events-brokers"),
        ("Service", "events-bootstrap"),
        ("StatefulSet", "events-broker"),
        ("PodDisruptionBudget", "events-broker"),
    }


def test_brokers_restart_only_when_the_operator_deletes_them() -> None:
    sts = build({})["StatefulSet", "events-broker"]
    assert sts["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert sts["spec"]["serviceName"] == "events-brokers"


def test_broker_id_is_the_ordinal_and_the_pod_dns_name_is_advertised() -> None:
    env = {e["name"]: e for e in broker_pod({})["spec"]["containers"][0]["env"]}
    assert env["ODRADEK_NODE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == (
        f"metadata.labels['{POD_INDEX_LABEL}']"
    )
    assert env["ODRADEK_ADVERTISED_LISTENERS"]["value"] == (
        "PLAINTEXT://$(POD_NAME).events-brokers.$(POD_NAMESPACE).svc:9092"
    )


def test_probes_use_readyz_for_readiness_and_healthz_for_liveness() -> None:
    broker = broker_pod({})["spec"]["containers"][0]
    assert broker["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert broker["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert broker["startupProbe"]["httpGet"]["path"] == "/healthz"


def test_claims_are_kept_unless_delete_claim() -> None:
    kept = build({})["StatefulSet", "events-broker"]["spec"]
    assert kept["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Retain"
    [claim] = kept["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "10Gi"
    deleted = build(SPECS["everything"])["StatefulSet", "events-broker"]["spec"]
    assert deleted["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Delete",
        "whenScaled": "Delete",
    }
    assert deleted["volumeClaimTemplates"][0]["spec"]["storageClassName"] == "fast"


def test_ephemeral_storage_uses_an_empty_dir_and_no_claims() -> None:
    sts = build(SPECS["ephemeral-external-etcd"])["StatefulSet", "events-broker"]
    assert "volumeClaimTemplates" not in sts["spec"]
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert volumes["data"]["emptyDir"] == {"sizeLimit": "1Gi"}


def test_rack_awareness_adds_an_init_step_that_alone_gets_an_api_token() -> None:
    pod = broker_pod({"rack": {"topologyKey": "example.com/zone"}})["spec"]
    [init] = pod["initContainers"]
    assert init["command"][:3] == ["python3", "-m", "odradek.operator.pod_init"]
    assert "example.com/zone" in init["command"]
    assert any(m["name"] == "token" for m in init["volumeMounts"])
    broker = pod["containers"][0]
    assert all(m["name"] != "token" for m in broker["volumeMounts"])
    assert pod["automountServiceAccountToken"] is False
    assert broker["args"] == ["broker", "--config", "/var/run/odradek/broker.properties"]


def test_an_external_listener_is_advertised_by_the_init_step_and_served_by_node_ports() -> None:
    listeners = [
        {"name": "PLAIN", "port": 9092},
        {"name": "EXTERNAL", "port": 9094, "external": {"type": "nodeport"}},
    ]
    pod = broker_pod({"replicas": 2, "listeners": listeners})["spec"]
    [init] = pod["initContainers"]
    command = init["command"]
    advertised = command[command.index("--advertised") + 1]
    assert advertised == "PLAIN://$(POD_NAME).events-brokers.$(POD_NAMESPACE).svc:9092"
    assert command[command.index("--external") + 1] == "EXTERNAL"
    assert command[command.index("--host") + 1] == "$(HOST_IP)"
    host_ip = {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}
    assert host_ip in init["env"]
    assert all(m["name"] != "token" for m in init["volumeMounts"])  # no rack: no API token
    broker = pod["containers"][0]
    assert all(e["name"] != "ODRADEK_ADVERTISED_LISTENERS" for e in broker["env"])
    assert broker["args"] == ["broker", "--config", "/var/run/odradek/broker.properties"]
    ports = {"name": "events-external-ports"}
    assert {"name": "external-ports", "configMap": ports} in pod["volumes"]


def test_an_external_listener_gets_a_node_port_service_per_broker() -> None:
    listener = Listener.model_validate({"name": "EXTERNAL", "port": 9094, "external": {}})
    service = external_service(OWNER, listener, 1)
    assert_valid(service)
    assert service["metadata"]["name"] == "events-broker-1-external"
    assert service["spec"]["type"] == "NodePort"
    assert service["spec"]["selector"] == {"statefulset.kubernetes.io/pod-name": "events-broker-1"}
    assert service["spec"]["ports"] == [{"name": "external", "port": 9094, "targetPort": 9094}]


def test_a_load_balancer_listener_gets_a_load_balancer_service_per_broker() -> None:
    external = {"type": "loadbalancer"}
    listener = Listener.model_validate({"name": "PUBLIC", "port": 9095, "external": external})
    service = external_service(OWNER, listener, 0)
    assert_valid(service)
    assert service["metadata"]["name"] == "events-broker-0-public"
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["spec"]["ports"] == [{"name": "public", "port": 9095, "targetPort": 9095}]
    pod = broker_pod({"listeners": [{"name": "PLAIN"}, listener.wire()]})["spec"]
    command = pod["initContainers"][0]["command"]
    assert command[command.index("--wait") + 1] == "600"


def test_without_rack_the_broker_reads_the_config_map_directly() -> None:
    pod = broker_pod({})["spec"]
    assert "initContainers" not in pod
    assert pod["containers"][0]["args"] == ["broker", "--config", "/etc/odradek/broker.properties"]


def test_brokers_spread_over_zones_and_nodes_by_default() -> None:
    spread = broker_pod({"rack": {}})["spec"]["topologySpreadConstraints"]
    assert [c["topologyKey"] for c in spread] == [
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    ]
    assert {c["whenUnsatisfiable"] for c in spread} == {"ScheduleAnyway"}
    assert {c["nodeTaintsPolicy"] for c in spread} == {"Honor"}  # a lost node does not count
    no_rack = broker_pod({})["spec"]["topologySpreadConstraints"]
    assert [c["topologyKey"] for c in no_rack] == ["kubernetes.io/hostname"]


def test_pod_template_overrides_replace_the_defaults() -> None:
    pod = broker_pod(SPECS["everything"])
    template = SPECS["everything"]["template"]
    assert pod["metadata"]["labels"]["team"] == "data"
    assert pod["metadata"]["annotations"]["note"] == "x"
    spec = pod["spec"]
    assert spec["affinity"] == template["affinity"]
    assert spec["tolerations"] == template["tolerations"]
    assert spec["topologySpreadConstraints"] == template["topologySpreadConstraints"]
    assert spec["priorityClassName"] == "high"
    assert spec["nodeSelector"] == {"pool": "kafka"}
    assert spec["securityContext"] == template["securityContext"]
    assert spec["containers"][0]["securityContext"] == {"readOnlyRootFilesystem": True}


def test_user_labels_cannot_change_the_pod_selector() -> None:
    pod = broker_pod({"template": {"labels": {"app.kubernetes.io/instance": "other"}}})
    assert pod["metadata"]["labels"]["app.kubernetes.io/instance"] == "events"


def test_a_config_change_changes_the_pod_template_but_scaling_does_not() -> None:
    def config_hash(spec: dict[str, Any]) -> str:
        return str(broker_pod(spec)["metadata"]["annotations"][CONFIG_HASH_ANNOTATION])

    base = config_hash({})
    assert config_hash({"replicas": 7}) == base
    assert config_hash({"config": {"log.retention.hours": 1}}) != base


def test_disruption_budgets_allow_one_pod_at_a_time() -> None:
    objects = build({})
    for name in ("events-broker", "events-etcd"):
        assert objects["PodDisruptionBudget", name]["spec"]["maxUnavailable"] == 1


def test_managed_etcd_members_know_each_other() -> None:
    sts = build({"coordination": {"managed": {"replicas": 3}}})["StatefulSet", "events-etcd"]
    command = sts["spec"]["template"]["spec"]["containers"][0]["command"]
    [initial] = [c for c in command if c.startswith("--initial-cluster=")]
    assert len(initial.split(",")) == 3
    assert "events-etcd-2=http://events-etcd-2.events-etcd.prod.svc:2380" in initial


def test_a_secured_clusters_etcd_takes_only_clients_and_peers_with_certificates() -> None:
    spec = {
        "coordination": {"managed": {"replicas": 3}},
        "listeners": [{"name": "TLS", "port": 9093, "tls": True}],
    }
    sts = build(spec)["StatefulSet", "events-etcd"]
    assert_valid(sts)
    pod = sts["spec"]["template"]["spec"]
    [container] = pod["containers"]
    command = container["command"]
    assert "--listen-client-urls=https://0.0.0.0:2379" in command
    assert "--client-cert-auth" in command and "--peer-client-cert-auth" in command
    assert "--cert-file=/etc/etcd/certs/$(POD_NAME).crt" in command
    [initial] = [c for c in command if c.startswith("--initial-cluster=")]
    assert "events-etcd-2=https://events-etcd-2.events-etcd.prod.svc:2380" in initial
    # the probes cannot present a certificate: they use the plain metrics port
    assert container["readinessProbe"]["httpGet"]["port"] == "metrics"
    assert {"name": "metrics", "containerPort": 2381} in container["ports"]
    certs = {"secretName": "events-etcd-certs", "defaultMode": 0o440}
    assert {"name": "certs", "secret": certs} in pod["volumes"]


def test_external_etcd_creates_no_etcd_objects() -> None:
    kinds = build(SPECS["ephemeral-external-etcd"])
    assert not [key for key in kinds if "etcd" in key[1]]


def test_monitoring_objects_are_optional() -> None:
    full = build(SPECS["everything"])
    assert ("ServiceMonitor", "events-broker") in full
    rule = full["PrometheusRule", "events-broker"]
    alerts = {r["alert"] for r in rule["spec"]["groups"][0]["rules"]}
    assert {
        "OdradekUnderReplicatedPartitions",
        "OdradekOfflinePartitions",
        "OdradekActiveControllerCount",
        "OdradekDiskNearlyFull",
        "OdradekCertificateNotRenewed",
    } <= alerts
    assert not [k for k in build({}) if k[0] in {"ServiceMonitor", "PrometheusRule"}]


def test_the_certificate_alert_fires_inside_the_clusters_renewal_window() -> None:
    spec = {**SPECS["everything"], "clusterCa": {"validityDays": 90, "renewalDays": 20}}
    rule = build(spec)["PrometheusRule", "events-broker"]
    [alert] = [
        r
        for r in rule["spec"]["groups"][0]["rules"]
        if r["alert"] == "OdradekCertificateNotRenewed"
    ]
    assert alert["expr"].endswith("- time() < 20 * 86400")
    assert 'namespace="' in alert["expr"] and "events-broker-[0-9]+" in alert["expr"]


def test_tls_mounts_the_broker_certificates_and_opens_the_replication_listener() -> None:
    spec = {
        "listeners": [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]
    }
    pod = broker_pod(spec)["spec"]
    [container] = pod["containers"]
    secret = {"secretName": "events-broker-certs", "defaultMode": 0o440}
    assert {"name": "certs", "secret": secret} in pod["volumes"]
    mount = {"name": "certs", "mountPath": "/etc/odradek/certs", "readOnly": True}
    assert mount in container["volumeMounts"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert env["ODRADEK_SSL_KEYSTORE_LOCATION"] == "/etc/odradek/certs/$(POD_NAME).pem"
    assert [p["containerPort"] for p in container["ports"]] == [9092, 9093, 9091, 9080]
    bootstrap = build(spec)["Service", "events-bootstrap"]
    assert [p["port"] for p in bootstrap["spec"]["ports"]] == [9092, 9093, 9091, 9080]

    plain = broker_pod({})["spec"]
    assert "certs" not in {volume["name"] for volume in plain["volumes"]}
