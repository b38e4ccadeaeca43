from __future__ import annotations

from pathlib import Path

import pytest

from odradek.cli.main import main


def test_mirror_reports_an_invalid_config_field_as_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mirror.yaml"
    config.write_text("source: {alias: east}\ntarget: {alias: west, bootstrapServers: w:9092}\n")
    with pytest.raises(SystemExit) as exit_:
        main(["mirror", "--config", str(config)])
    assert exit_.value.code == 1
    assert capsys.readouterr().err == (
        "odradek mirror: error: mirror config: source.bootstrapServers: required\n"
    )


def test_mirror_refuses_an_http_listener_without_a_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["mirror", "--config", str(tmp_path / "m.yaml"), "--http-listener", "localhost"])
    assert "--http-listener: expected HOST:PORT" in capsys.readouterr().err
