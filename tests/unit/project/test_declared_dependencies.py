"""Every top-level import resolves to the standard library, the project, or a dependency
that pyproject.toml declares in a group the importing part of the repository installs.

A package installed by hand, or only as another package's dependency, must not let an
import pass here: the test suite's setup installs exactly the declared lists.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BASE = "dependencies"
BUILD = "build-system"

# The requirement groups each part of the repository may import from: what the setup
# profile that runs it installs (scripts/setup.sh).
ALLOWED_GROUPS: dict[str, tuple[str, ...]] = {
    "odradek": (BASE,),
    "broker": (BASE,),
    "mirror": (BASE,),
    "operator": (BASE, "operator"),
    "spark": (BASE, "spark"),
    "bench": (BASE, "bench", "spark"),
    "tests": (BASE, "test", "operator", "spark", "bench"),
    "setup.py": (BUILD,),
}
# Folders whose modules are scripts or test helpers imported by their bare name.
SCRIPT_FOLDERS = ("tests", "bench")


def normalize(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"unreadable requirement {requirement!r}"
    return normalize(match.group(1))


def declared_groups(pyproject: Mapping[str, object]) -> dict[str, set[str]]:
    """Requirement group -> normalized distribution names ("dependencies", each extra,
    "build-system")."""
    project = pyproject["project"]
    build = pyproject["build-system"]
    assert isinstance(project, dict) and isinstance(build, dict)
    groups = {BASE: project.get("dependencies", []), BUILD: build.get("requires", [])}
    groups.update(project.get("optional-dependencies", {}))
    return {group: {requirement_name(r) for r in reqs} for group, reqs in groups.items()}


def top_level_imports(source: str) -> set[str]:
    """First components of every absolute import, wherever it stands in the module."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def local_module_names(root: Path) -> set[str]:
    """Bare names the scripts and test helpers import each other by."""
    names = {"odradek"}
    for folder in SCRIPT_FOLDERS:
        for path in (root / folder).rglob("*.py"):
            names.add(path.parent.name if path.name == "__init__.py" else path.stem)
    return names


def python_files(root: Path, parts: Iterable[str]) -> Iterator[tuple[str, Path]]:
    for part in parts:
        path = root / part
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            yield part, file


def undeclared_imports(
    root: Path,
    groups: Mapping[str, set[str]],
    allowed: Mapping[str, tuple[str, ...]],
    providers: Mapping[str, list[str]],
) -> list[str]:
    """One sentence per import that the groups a part of the repository installs miss."""
    local = local_module_names(root)
    problems = []
    for part, file in python_files(root, allowed):
        usable = set().union(*(groups.get(g, set()) for g in allowed[part]))
        for name in sorted(top_level_imports(file.read_text()) - local):
            if name in sys.stdlib_module_names:
                continue
            where = f"{file.relative_to(root)} imports {name}"
            distributions = {normalize(d) for d in providers.get(name, [])}
            if not distributions:
                problems.append(f"{where}, which no installed distribution provides")
            elif not distributions & usable:
                problems.append(
                    f"{where} (from {', '.join(sorted(distributions))}), which none of "
                    f"{', '.join(allowed[part])} in pyproject.toml declares"
                )
    return problems


def test_every_import_resolves_to_the_stdlib_the_project_or_a_declared_dependency() -> None:
    groups = declared_groups(tomllib.loads((ROOT / "pyproject.toml").read_text()))
    assert set(g for parts in ALLOWED_GROUPS.values() for g in parts) <= set(groups)
    assert undeclared_imports(ROOT, groups, ALLOWED_GROUPS, packages_distributions()) == []


def test_an_import_missing_from_its_part_of_the_repository_groups_is_reported(
    tmp_path: Path,
) -> None:
    (tmp_path / "broker").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "broker" / "server.py").write_text(
        "from __future__ import annotations\n"
        "import json, zstandard\n"
        "def late():\n"
        "    import yaml\n"
        "    from kopf import on\n"
        "    import not_installed_anywhere\n"
        "    from . import sibling\n"
    )
    (tmp_path / "tests" / "helper.py").write_text("import kopf\n")
    (tmp_path / "tests" / "test_x.py").write_text("import helper, kopf\n")
    groups = {BASE: {"zstandard"}, "operator": {"kopf"}, "test": set()}
    allowed = {"broker": (BASE,), "tests": (BASE, "operator")}
    providers = {"zstandard": ["zstandard"], "yaml": ["PyYAML"], "kopf": ["kopf"]}

    assert undeclared_imports(tmp_path, groups, allowed, providers) == [
        "broker/server.py imports kopf (from kopf), which none of dependencies in "
        "pyproject.toml declares",
        "broker/server.py imports not_installed_anywhere, which no installed distribution provides",
        "broker/server.py imports yaml (from pyyaml), which none of dependencies in "
        "pyproject.toml declares",
    ]
