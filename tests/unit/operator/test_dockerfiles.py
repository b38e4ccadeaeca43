"""Dockerfile lint: rules every image keeps, checked in milliseconds (the images are built
and run for real by tests/integration/test_images.py, where Docker can run)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILES = sorted((ROOT / "images").glob("*/Dockerfile"))


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


@pytest.fixture(params=DOCKERFILES, ids=lambda p: p.parent.name)
def dockerfile(request: pytest.FixtureRequest) -> list[tuple[str, str]]:
    return instructions(request.param)


def build_arg_defaults(dockerfile: list[tuple[str, str]]) -> dict[str, str]:
    """``ARG NAME=default`` values, which ``FROM ${NAME}`` uses unless a build overrides them."""
    defaults = {}
    for keyword, args in dockerfile:
        name, sep, default = args.partition("=")
        if keyword == "ARG" and sep:
            defaults[name] = default
    return defaults


def test_base_images_are_pinned_to_a_version(dockerfile: list[tuple[str, str]]) -> None:
    defaults = build_arg_defaults(dockerfile)
    for keyword, args in dockerfile:
        if keyword == "FROM":
            image = re.sub(r"\$\{(\w+)\}", lambda m: defaults[m[1]], args.split()[0])
            assert re.search(r":\d+\.\d+", image), f"unpinned base image {image}"


def test_every_stage_starts_from_the_base_image_build_argument(
    dockerfile: list[tuple[str, str]],
) -> None:
    # images/build.sh passes a locally made base where the public one cannot be pulled.
    bases = [args.split()[0] for keyword, args in dockerfile if keyword == "FROM"]
    assert bases and set(bases) == {"${BASE_IMAGE}"}
    assert dockerfile[0][0] == "ARG" and dockerfile[0][1].startswith("BASE_IMAGE=")


def test_the_final_stage_runs_as_uid_1000(dockerfile: list[tuple[str, str]]) -> None:
    # one non-root uid for every image: the chart's and the operator's pods run as 1000
    last_from = max(i for i, (k, _) in enumerate(dockerfile) if k == "FROM")
    users = [a for k, a in dockerfile[last_from:] if k == "USER"]
    assert users, "no USER in the final stage"
    assert users[-1] == "1000:1000"


def test_entrypoint_uses_exec_form(dockerfile: list[tuple[str, str]]) -> None:
    [entrypoint] = [a for k, a in dockerfile if k == "ENTRYPOINT"]
    assert isinstance(json.loads(entrypoint), list)


def test_no_downloads_or_caches_in_layers(dockerfile: list[tuple[str, str]]) -> None:
    for keyword, args in dockerfile:
        assert keyword != "ADD", "use COPY"
        if keyword == "RUN" and "pip install" in args:
            assert "--no-cache-dir" in args
        if keyword == "RUN" and "apt-get install" in args:
            assert "--no-install-recommends" in args and "rm -rf /var/lib/apt/lists" in args
        assert not re.search(r"\b(curl|wget)\b", args), "fetch through a package manager"


def test_copied_sources_exist_in_the_repository(dockerfile: list[tuple[str, str]]) -> None:
    for keyword, args in dockerfile:
        if keyword == "COPY" and not args.startswith("--from"):
            for source in args.split()[:-1]:
                assert (ROOT / source).exists(), source


def test_broker_image_entrypoint_is_odradek() -> None:
    broker = instructions(ROOT / "images/odradek/Dockerfile")
    assert ("ENTRYPOINT", '["odradek"]') in broker


def test_spark_image_starts_sparks_kubernetes_entrypoint_under_tini() -> None:
    spark = instructions(ROOT / "images/spark/Dockerfile")
    assert ("ENTRYPOINT", '["/usr/bin/tini", "-s", "--", "/opt/spark/entrypoint.sh"]') in spark
    assert ("COPY", "images/spark/entrypoint.sh /opt/spark/entrypoint.sh") in spark
    assert os.access(ROOT / "images/spark/entrypoint.sh", os.X_OK)


def _images_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "images" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_images_install_the_dependencies_pyproject_declares() -> None:
    requirements = _images_module("requirements").requirements
    pyproject = ROOT / "pyproject.toml"

    assert any(r.startswith("kio") for r in requirements(pyproject, []))
    assert any(r.startswith("kopf") for r in requirements(pyproject, ["operator"]))
    assert any(r.startswith("pyspark") for r in requirements(pyproject, ["spark"]))


def test_the_images_console_scripts_run_the_declared_entry_points(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    [script] = _images_module("console_scripts").write_scripts(ROOT / "pyproject.toml", tmp_path)

    assert script.name == "odradek" and os.access(script, os.X_OK)
    assert script.read_text().startswith(f"#!{tmp_path}/bin/python3\n")
    assert "from odradek.cli.main import main" in script.read_text()
