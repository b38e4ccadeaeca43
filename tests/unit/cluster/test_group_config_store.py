"""Dynamic group configs in the metadata image and in the embedded single-broker store:
replaced as a whole, removed with their last value, persisted in cluster-metadata.json and
read back on the next start, read by the rest of the broker through a typed view."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from odradek.broker.cluster.metadata_image import BrokerRegistration, MetadataImage
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore

BROKER = BrokerRegistration(0, "127.0.0.1", 9092)


def test_the_image_replaces_a_groups_configs_and_drops_a_group_left_with_none() -> None:
    image = MetadataImage("c", 0).with_group_configs(
        "orders", {"consumer.session.timeout.ms": "50000"}
    )
    image = image.with_group_configs("audit", {"share.auto.offset.reset": "earliest"})
    changed = image.with_group_configs("orders", {"consumer.heartbeat.interval.ms": "6000"})
    emptied = changed.with_group_configs("audit", {})

    assert changed.group_configs == {
        "orders": {"consumer.heartbeat.interval.ms": "6000"},
        "audit": {"share.auto.offset.reset": "earliest"},
    }
    assert emptied.group_configs == {"orders": {"consumer.heartbeat.interval.ms": "6000"}}
    assert image.group_configs["orders"] == {"consumer.session.timeout.ms": "50000"}  # immutable


def test_the_image_gives_a_typed_view_with_the_callers_defaults() -> None:
    image = MetadataImage("c", 0).with_group_configs(
        "orders", {"consumer.session.timeout.ms": "50000"}
    )

    assert image.configs_of_group("orders").consumer_session_timeout_ms(45000) == 50000
    assert image.configs_of_group("orders").consumer_heartbeat_interval_ms(5000) == 5000
    assert image.configs_of_group("unknown").consumer_session_timeout_ms(8000) == 8000


def test_group_configs_survive_a_restart_of_the_embedded_store(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    heard: list[MetadataImage] = []
    store.subscribe(lambda old, new: heard.append(new))
    asyncio.run(store.set_group_configs("orders/eu", {"share.isolation.level": "read_committed"}))
    asyncio.run(store.set_group_configs("audit", {"consumer.session.timeout.ms": "50000"}))

    reopened = EmbeddedMetadataStore(tmp_path, BROKER)

    assert reopened.image.group_configs == {
        "orders/eu": {"share.isolation.level": "read_committed"},
        "audit": {"consumer.session.timeout.ms": "50000"},
    }
    assert [image.group_configs.keys() for image in heard] == [
        {"orders/eu"},
        {"orders/eu", "audit"},
    ]


def test_deleting_a_groups_last_config_removes_its_entry_from_the_file(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    asyncio.run(store.set_group_configs("orders", {"consumer.session.timeout.ms": "50000"}))
    asyncio.run(store.set_group_configs("orders", {}))

    saved = json.loads((tmp_path / EmbeddedMetadataStore.FILE_NAME).read_text())
    assert saved["group_configs"] == {}
    assert EmbeddedMetadataStore(tmp_path, BROKER).image.group_configs == {}
