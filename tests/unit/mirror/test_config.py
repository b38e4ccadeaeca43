from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from odradek.mirror.config import MirrorConfigError, load_config, parse_config
from odradek.operator.builders.meta import Owner
from odradek.operator.builders.mirrormaker import mirror_config
from odradek.operator.models import MirrorMakerSpec


def _document(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "source": {"alias": "east", "bootstrapServers": "east:9092"},
        "target": {"alias": "west", "bootstrapServers": "west:9092", "config": {"acks": "all"}},
    }
    document.update(changes)
    return document


def test_the_file_the_operator_writes_is_accepted_as_written() -> None:
    spec = MirrorMakerSpec.model_validate(
        {
            "source": {"alias": "east", "cluster": "events"},
            "target": {"alias": "west", "bootstrapServers": "west:9092"},
            "topics": {"include": ["orders.*"], "exclude": [".*internal"]},
            "groups": {"include": ["billing"]},
            "naming": "identity",
            "checkpoints": {"intervalSeconds": 5, "syncGroupOffsets": True},
            "offsetSync": {"intervalSeconds": 7},
            "refreshIntervalSeconds": 15,
            "exactlyOnce": True,
        }
    )
    owner = Owner(kind="MirrorMaker", name="dr", namespace="prod", uid="1")
    config = parse_config(yaml.safe_load(mirror_config(owner, spec)))
    assert config.name == "dr" and config.group_id == "odradek-mirror.dr"
    assert config.source.bootstrap_servers == "events-bootstrap.prod.svc:9092"
    assert config.topics.include == ("orders.*",) and config.groups.include == ("billing",)
    assert config.naming == "identity"
    assert config.checkpoints.interval_s == 5 and config.checkpoints.sync_group_offsets
    assert config.offset_sync.interval_s == 7
    assert config.refresh_interval_s == 15
    assert config.exactly_once


def test_defaults_mirror_every_topic_with_the_prefix_policy_and_no_groups() -> None:
    config = parse_config(_document())
    assert config.naming == "prefix" and config.topics.include == (".*",)
    assert config.groups.include == () and config.name == "east-to-west"
    assert not config.exactly_once  # at least once unless asked
    assert config.target.client_config == {"acks": "all"}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"source": {"alias": "east"}}, "source.bootstrapServers: required"),
        ({"topics": {"inclde": [".*"]}}, "topics.inclde: unknown field"),
        ({"topics": {"include": ["ok", "("]}}, "topics.include[1]: invalid regular expression"),
        ({"topics": {"include": "orders"}}, "topics.include: expected a list"),
        ({"naming": "suffix"}, "naming: expected 'prefix' or 'identity'"),
        ({"checkpoints": {"intervalSeconds": 0}}, "checkpoints.intervalSeconds: must be at least"),
        ({"checkpoints": {"enabled": "yes"}}, "checkpoints.enabled: expected true or false"),
        ({"queueSize": True}, "queueSize: expected an integer or a number, got True"),
        ({"target": {"alias": "east", "bootstrapServers": "x:1"}}, "target.alias: must differ"),
        ({"source": {"alias": "e/st", "bootstrapServers": "x:1"}}, "source.alias: 'e/st' must be"),
        ({"replicationFactor": 0}, "replicationFactor: must be -1"),
        ({"source": None}, "source.alias: required"),
        ({"offsetSync": []}, "offsetSync: expected a mapping"),
        ({"exactlyOnce": "yes"}, "exactlyOnce: expected true or false"),
    ],
)
def test_an_invalid_field_is_named_in_the_error(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(MirrorConfigError) as error:
        parse_config(_document(**changes))
    assert str(error.value).startswith(message), str(error.value)


def test_a_file_that_is_missing_or_not_yaml_is_reported_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(MirrorConfigError, match=r"cannot read .*absent\.yaml"):
        load_config(tmp_path / "absent.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("source: [unclosed")
    with pytest.raises(MirrorConfigError, match=r"broken\.yaml is not valid YAML"):
        load_config(broken)


def test_a_client_setting_read_from_a_missing_file_is_named(tmp_path: Path) -> None:
    document = _document(
        source={
            "alias": "east",
            "bootstrapServers": "east:9092",
            "config": {"sasl.password": f"${{directory:{tmp_path}:password}}"},
        }
    )
    with pytest.raises(MirrorConfigError, match=r"source\.config\.sasl\.password: cannot read"):
        parse_config(document)
