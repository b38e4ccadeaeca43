"""The GROUP config resource behind IncrementalAlterConfigs, AlterConfigs and
DescribeConfigs: INVALID_CONFIG for a bad value, INVALID_REQUEST for the default group,
no list operations, and every config described with Kafka's sources and synonyms."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore
from odradek.broker.config.broker_config import BrokerConfig, ConfigSource
from odradek.broker.config.dynamic_group_configs import GROUP_CONFIGS
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.authorization import CONFIG_GROUP
from odradek.broker.server.config_alteration import (
    AlterOp,
    apply_incremental,
    current_configs,
    replace_configs,
)
from odradek.broker.server.config_description import Synonym, describe_group_config

SESSION = "consumer.session.timeout.ms"


@pytest.fixture
def context(tmp_path: Path) -> Any:
    """What the config handlers use of a broker: its store and its configuration (the
    broker's consumer session timeout set statically)."""
    return SimpleNamespace(
        store=EmbeddedMetadataStore(tmp_path, BrokerRegistration(0, "127.0.0.1", 9092)),
        config=BrokerConfig.load(
            environ={}, overrides={"group.consumer.session.timeout.ms": "50000"}
        ),
    )


def alter(context: Any, group: str, *changes: tuple[str, AlterOp, str | None]) -> None:
    """IncrementalAlterConfigs of one group resource."""
    operations = [(name, int(op), value) for name, op, value in changes]
    updated = apply_incremental(
        current_configs(context, CONFIG_GROUP, group), operations, CONFIG_GROUP
    )
    asyncio.run(replace_configs(context, CONFIG_GROUP, group, updated, validate_only=False))


def refusal(
    context: Any, group: str, *changes: tuple[str, AlterOp, str | None]
) -> tuple[ErrorCode, str]:
    with pytest.raises(KafkaError) as refused:
        alter(context, group, *changes)
    return refused.value.code, refused.value.message


def test_set_and_delete_change_one_config_each_of_a_group_with_no_members(context: Any) -> None:
    alter(
        context,
        "orders",
        (SESSION, AlterOp.SET, "55000"),
        ("share.isolation.level", AlterOp.SET, "read_committed"),
    )
    alter(context, "orders", (SESSION, AlterOp.DELETE, None), ("no.such.key", AlterOp.DELETE, None))

    assert context.store.image.group_configs == {
        "orders": {"share.isolation.level": "read_committed"}
    }


def test_a_bad_value_is_invalid_config_and_changes_nothing(context: Any) -> None:
    alter(context, "orders", (SESSION, AlterOp.SET, "55000"))

    assert refusal(context, "orders", (SESSION, AlterOp.SET, "1000")) == (
        ErrorCode.invalid_config,
        f"{SESSION} must be greater than or equal to group.consumer.min.session.timeout.ms (45000)",
    )
    assert context.store.image.group_configs == {"orders": {SESSION: "55000"}}


def test_list_operations_on_group_configs_are_invalid_config(context: Any) -> None:
    code, message = refusal(context, "orders", ("share.isolation.level", AlterOp.APPEND, "x"))
    assert (code, message) == (
        ErrorCode.invalid_config,
        "share.isolation.level: APPEND and SUBTRACT need a list",
    )


def test_the_default_group_resource_is_refused(context: Any) -> None:
    assert refusal(context, "", (SESSION, AlterOp.SET, "55000")) == (
        ErrorCode.invalid_request,
        "Default group resources are not allowed.",
    )


def test_validate_only_stores_nothing(context: Any) -> None:
    asyncio.run(
        replace_configs(context, CONFIG_GROUP, "orders", {SESSION: "55000"}, validate_only=True)
    )
    assert context.store.image.group_configs == {}


def test_a_described_group_lists_every_config_with_kafkas_sources(context: Any) -> None:
    alter(
        context,
        "orders",
        (SESSION, AlterOp.SET, " 55000"),
        ("share.auto.offset.reset", AlterOp.SET, "earliest"),
    )
    entries = {entry.name: entry for entry in describe_group_config(context, "orders")}
    broker_key = "group.consumer.session.timeout.ms"

    assert list(entries) == list(GROUP_CONFIGS)
    assert (entries[SESSION].value, entries[SESSION].source) == (55000, ConfigSource.GROUP_CONFIG)
    assert entries[SESSION].synonyms == (
        Synonym(SESSION, 55000, ConfigSource.GROUP_CONFIG),
        Synonym(broker_key, 50000, ConfigSource.STATIC_BROKER_CONFIG),
        Synonym(broker_key, 45000, ConfigSource.DEFAULT_CONFIG),
    )
    assert entries["share.auto.offset.reset"].synonyms == (
        Synonym("share.auto.offset.reset", "earliest", ConfigSource.GROUP_CONFIG),
        Synonym("share.auto.offset.reset", "latest", ConfigSource.DEFAULT_CONFIG),
    )
    heartbeat = entries["consumer.heartbeat.interval.ms"]
    assert (heartbeat.value, heartbeat.source) == (5000, ConfigSource.DEFAULT_CONFIG)


def test_a_group_unknown_to_the_cluster_is_described_with_the_defaults(context: Any) -> None:
    entries = describe_group_config(context, "nobody")
    assert all(entry.source is not ConfigSource.GROUP_CONFIG for entry in entries)
    assert {entry.name: entry.value for entry in entries}[SESSION] == 50000
