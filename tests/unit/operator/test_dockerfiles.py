"""Dockerfile lint: the images cannot be built here (no Docker engine), so check their rules."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

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


def test_base_images_are_pinned_to_a_version(dockerfile: list[tuple[str, str]]) -> None:
    for keyword, args in dockerfile:
        if keyword == "FROM":
            image = args.split()[0]
            assert re.search(r":\d+\.\d+", image), f"unpinned base image {image}"


def test_the_final_stage_runs_as_a_numeric_non_root_user(dockerfile: list[tuple[str, str]]) -> None:
    last_from = max(i for i, (k, _) in enumerate(dockerfile) if k == "FROM")
    users = [a for k, a in dockerfile[last_from:] if k == "USER"]
    assert users, "no USER in the final stage"
    uid = users[-1].split(":")[0]
    assert uid.isdigit() and int(uid) != 0


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
