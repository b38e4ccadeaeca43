"""The single broker's metadata file cannot be written (a full or failing disk): the
change is refused with KAFKA_STORAGE_ERROR and a plain message, not applied in memory or
on disk, logged in one ERROR line however often it fails; once the file can be written
again, changes go through.

The fault is real: RLIMIT_FSIZE makes the write of the file fail with EFBIG, as a full
disk fails it with ENOSPC.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from odradek.broker.cluster.metadata_image import BrokerRegistration, PartitionState, TopicMetadata
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore
from odradek.broker.protocol.errors import ErrorCode, KafkaError

BROKER = BrokerRegistration(0, "127.0.0.1", 9092)


def topic(name: str) -> TopicMetadata:
    return TopicMetadata(name, uuid.uuid4(), (PartitionState(0, (0,), 0, isr=(0,)),))


def test_a_metadata_file_that_cannot_be_written_refuses_changes_with_a_storage_error(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    file_size_limit: Callable[[int], AbstractContextManager[None]],
) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    path = tmp_path / EmbeddedMetadataStore.FILE_NAME
    written = path.read_bytes()

    async def refused(call: object) -> KafkaError:
        with pytest.raises(KafkaError) as raised:
            await call  # type: ignore[misc]
        return raised.value

    async def main() -> None:
        with file_size_limit(len(written) // 2), caplog.at_level(logging.ERROR):
            first = await refused(store.create_topic(topic("orders")))
            await refused(store.create_topic(topic("audit")))
            await refused(store.reserve_producer_ids(1000))
        assert first.code == ErrorCode.kafka_storage_error
        assert first.message == f"cannot write the cluster metadata to {path}: File too large"
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert errors == [f"{first.message}; metadata changes fail until it can"]
        assert store.image.topics == {}
        assert path.read_bytes() == written

        assert await store.reserve_producer_ids(1000) == 0  # the failed reservation took none
        await store.create_topic(topic("orders"))
        assert "orders" in store.image.topics
        assert [t["name"] for t in json.loads(path.read_text())["topics"]] == ["orders"]

    asyncio.run(main())
