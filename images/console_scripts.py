"""Writes the odradek distribution's console scripts ([project.scripts] in pyproject.toml)
into a venv's bin directory. The images install the package outside the venv, in a layer
of its own (so a change to the code leaves the dependencies' layer alone), which pip's
own script wrappers cannot point at; these wrappers are made with the venv instead.

    python3 console_scripts.py VENV
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

WRAPPER = """#!{python}
import sys
from {module} import {function}
sys.exit({function}())
"""


def write_scripts(pyproject: Path, venv: Path) -> list[Path]:
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    written = []
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        path = venv / "bin" / name
        path.write_text(
            WRAPPER.format(python=venv / "bin/python3", module=module, function=function)
        )
        path.chmod(0o755)
        written.append(path)
    return written


if __name__ == "__main__":
    write_scripts(Path("pyproject.toml"), Path(sys.argv[1]))
