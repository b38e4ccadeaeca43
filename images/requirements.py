"""Prints the odradek distribution's requirements, one per line, from pyproject.toml:
its dependencies plus those of the extras named as arguments. The Dockerfiles install
these in a layer of their own, before the sources are copied, so a change to the code
rebuilds only the small layer that installs odradek itself."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path


def requirements(pyproject: Path, extras: list[str]) -> list[str]:
    project = tomllib.loads(pyproject.read_text())["project"]
    found = list(project["dependencies"])
    for extra in extras:
        found += project["optional-dependencies"][extra]
    return found


if __name__ == "__main__":
    print("\n".join(requirements(Path("pyproject.toml"), sys.argv[1:])))
