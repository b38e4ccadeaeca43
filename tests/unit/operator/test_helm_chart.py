from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helm_binary import HOW, find_helm
from kubernetes_schemas import assert_valid

from odradek.operator.builders.cluster import cluster_objects
from odradek.operator.builders.meta import Owner
from odradek.operator.builders.mirrormaker import mirror_objects
from odradek.operator.models import ClusterSpec, MirrorMakerSpec

ROOT = Path(__file__).resolve().parents[3]
CHART = ROOT / "charts/odradek"
HELM = find_helm()
pytestmark = pytest.mark.skipif(HELM is None, reason=HOW)

NON_DEFAULT = {
    "image": {"repository": "registry.example.com/odradek", "tag": "9.9.9", "pullPolicy": "Always"},
    "watchNamespaces": ["team-a", "team-b"],
    "crds": {"install": False},
    "logLevel": "debug",
    "nodeSelector": {"pool": "system"},
    "tolerations": [{"key": "system", "operator": "Exists", "effect": "NoSchedule"}],
    "priorityClassName": "system-cluster-critical",
    "imagePullSecrets": [{"name": "registry"}],
    "metrics": {
        "port": 9191,
        "podMonitor": {"enabled": True},
        "prometheusRule": {"enabled": True, "labels": {"release": "prom"}},
        "dashboards": {"enabled": True},
    },
}


def helm(*args: str, values: dict[str, Any] | None = None, tmp: Path | None = None) -> str:
    command = [str(HELM), *args]
    if values is not None and tmp is not None:
        path = tmp / "values.yaml"
        path.write_text(yaml.safe_dump(values))
        command += ["-f", str(path)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def render(tmp: Path, values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    out = helm(
        "template",
        "odradek",
        str(CHART),
        "--namespace",
        "odradek",
        "--kube-version",
        "1.30.0",
        values=values or {},
        tmp=tmp,
    )
    return [d for d in yaml.safe_load_all(out) if d]


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize("values", [{}, NON_DEFAULT], ids=["defaults", "non-default"])
def test_helm_lint_passes(values: dict[str, Any], tmp_path: Path) -> None:
    helm("lint", "--strict", str(CHART), "--kube-version", "1.30.0", values=values, tmp=tmp_path)


def test_values_schema_rejects_unknown_settings(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("logLevel: loud\nreplicas: 2\n")
    result = subprocess.run(
        [str(HELM), "lint", str(CHART), "-f", str(tmp_path / "bad.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "logLevel must be one of" in result.stdout + result.stderr


@pytest.mark.parametrize("values", [{}, NON_DEFAULT], ids=["defaults", "non-default"])
def test_every_rendered_object_validates_strictly(values: dict[str, Any], tmp_path: Path) -> None:
    objects = render(tmp_path, values)
    assert objects
    for obj in objects:
        assert_valid(obj)


def test_chart_crds_are_the_generated_crds_kept_on_uninstall(tmp_path: Path) -> None:
    crds = {c["metadata"]["name"]: c for c in by_kind(render(tmp_path), "CustomResourceDefinition")}
    for path in sorted((ROOT / "crds").glob("*.yaml")):
        generated = yaml.safe_load(path.read_text())
        rendered = crds[generated["metadata"]["name"]]
        assert rendered["metadata"].pop("annotations") == {"helm.sh/resource-policy": "keep"}
        assert rendered == generated


def test_crds_can_be_left_out(tmp_path: Path) -> None:
    assert not by_kind(render(tmp_path, NON_DEFAULT), "CustomResourceDefinition")


def test_one_operator_replica_with_a_kopf_liveness_probe(tmp_path: Path) -> None:
    [deployment] = by_kind(render(tmp_path), "Deployment")
    assert deployment["spec"]["replicas"] == 1
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "--liveness=http://0.0.0.0:8080/healthz" in container["command"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert "--all-namespaces" in container["command"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True


def test_watched_namespaces_get_role_bindings_instead_of_cluster_wide_access(
    tmp_path: Path,
) -> None:
    objects = render(tmp_path, NON_DEFAULT)
    bindings = by_kind(objects, "RoleBinding")
    assert sorted(b["metadata"]["namespace"] for b in bindings) == ["team-a", "team-b"]
    cluster_bindings = [b["roleRef"]["name"] for b in by_kind(objects, "ClusterRoleBinding")]
    assert cluster_bindings == ["odradek-operator-cluster"]
    [deployment] = by_kind(objects, "Deployment")
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert "--namespace=team-a" in command and "--all-namespaces" not in command


def test_optional_monitoring_objects_and_dashboards(tmp_path: Path) -> None:
    objects = render(tmp_path, NON_DEFAULT)
    assert by_kind(objects, "PodMonitor") and by_kind(objects, "PrometheusRule")
    dashboards = [
        c for c in by_kind(objects, "ConfigMap") if "grafana_dashboard" in c["metadata"]["labels"]
    ]
    assert len(dashboards) == 4
    defaults = render(tmp_path)
    assert not by_kind(defaults, "PrometheusRule") and not by_kind(defaults, "ConfigMap")


def _resource(kind: str) -> str:
    plural = kind.lower()
    return plural[:-1] + "ies" if plural.endswith("y") else plural + "s"


def test_operator_rbac_covers_every_object_it_builds(tmp_path: Path) -> None:
    roles = {r["metadata"]["name"]: r for r in by_kind(render(tmp_path), "ClusterRole")}
    granted = {
        (group, resource, verb)
        for name in ("odradek-operator", "odradek-operator-cluster")
        for rule in roles[name]["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    owner = Owner("Cluster", "c", "ns", "u")
    spec = ClusterSpec.model_validate(
        {"rack": {}, "metrics": {"serviceMonitor": True, "prometheusRule": True}}
    )
    mirror = MirrorMakerSpec.model_validate(
        {"source": {"alias": "a", "cluster": "a"}, "target": {"alias": "b", "cluster": "b"}}
    )
    for obj in [*cluster_objects(owner, spec), *mirror_objects(owner, mirror)]:
        group = obj["apiVersion"].rpartition("/")[0]
        for verb in ("get", "create", "patch"):
            assert (group, _resource(obj["kind"]), verb) in granted, (obj["kind"], verb)
    for kind, verb in [
        ("pods", "delete"),
        ("persistentvolumeclaims", "delete"),
        ("nodes", "list"),
        ("persistentvolumes", "get"),
    ]:
        assert ("", kind, verb) in granted


def test_plain_install_manifest_is_the_rendered_chart(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    (copy / "manifests").mkdir(parents=True)
    (copy / "manifests/render.sh").write_bytes((ROOT / "manifests/render.sh").read_bytes())
    (copy / "charts").symlink_to(ROOT / "charts")
    subprocess.run(["sh", str(copy / "manifests/render.sh"), str(HELM)], check=True)
    assert (copy / "manifests/install.yaml").read_text() == (
        ROOT / "manifests/install.yaml"
    ).read_text(), "run manifests/render.sh"
