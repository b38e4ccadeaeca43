"""The share group settings and Kafka's startup checks of their bounds."""

from __future__ import annotations

import re

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.group.group_config import GroupConfig


def _group_config(**overrides: str) -> GroupConfig:
    return GroupConfig.from_broker(BrokerConfig.load(environ={}, overrides=overrides))


def test_kafkas_defaults() -> None:
    config = _group_config()
    assert (config.share_session_timeout_ms, config.share_heartbeat_interval_ms) == (45000, 5000)
    assert config.share_max_size == 200


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"group.share.session.timeout.ms": "30000"}, "group.share.min.session.timeout.ms"),
        ({"group.share.heartbeat.interval.ms": "20000"}, "group.share.max.heartbeat.interval.ms"),
        (
            {
                "group.share.heartbeat.interval.ms": "15000",
                "group.share.session.timeout.ms": "15000",
                "group.share.min.session.timeout.ms": "10000",
            },
            "must be less than group.share.session.timeout.ms",
        ),
    ],
)
def test_settings_outside_their_bounds_stop_the_broker(
    overrides: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        _group_config(**overrides)


def test_a_share_group_may_not_grow_past_a_thousand_members() -> None:
    with pytest.raises(ConfigError, match=re.escape("group.share.max.size")):
        _group_config(**{"group.share.max.size": "1001"})
