"""docs/configuration.md is generated from the configuration tables and kept in step."""

from __future__ import annotations

from pathlib import Path

from odradek.broker.config.reference import render

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_configuration_reference_matches_the_code() -> None:
    assert DOC.read_text() == render(), (
        "docs/configuration.md is stale: run "
        "python3 -m odradek.broker.config.reference > docs/configuration.md"
    )
