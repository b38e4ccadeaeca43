"""Lower layers never import higher ones: models < builders, planning < handlers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

OPERATOR = Path(__file__).resolve().parents[3] / "operator"
FORBIDDEN = {
    "models": {"builders", "planning", "handlers", "crdgen"},
    "builders": {"planning", "handlers", "crdgen"},
    "planning": {"builders", "handlers", "crdgen"},
    "crdgen": {"planning", "handlers"},
}


def operator_imports(path: Path) -> set[str]:
    """Top-level operator subpackages a module imports (relative or absolute)."""
    found = set()
    package = path.relative_to(OPERATOR).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                parts = [*base, *(node.module or "").split(".")]
            elif (node.module or "").startswith("odradek.operator."):
                parts = (node.module or "").split(".")[2:]
            else:
                continue
            parts = [p for p in parts if p]
            if parts:
                found.add(parts[0])
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    for path in sorted((OPERATOR / layer).rglob("*.py")):
        wrong = operator_imports(path) & FORBIDDEN[layer]
        assert not wrong, f"{path.relative_to(OPERATOR)} imports {sorted(wrong)}"
