"""librdkafka settings for the clients the data source makes (driver and executors), with
``${directory:DIR:KEY}`` values read where the client is made (odradek.config_references):
a password in a mounted Secret never stands in the Spark plan."""

from __future__ import annotations

from collections.abc import Mapping

from odradek.config_references import resolved_settings

# librdkafka's consumer insists on a group id even with assign(); nothing is ever
# committed under it (Spark's checkpoint holds the offsets).
READER_GROUP_ID = "odradek-spark-reader"


def admin_config(
    bootstrap_servers: str, settings: Mapping[str, str]
) -> dict[str, str | int | float | bool]:
    return {**resolved_settings(settings), "bootstrap.servers": bootstrap_servers}


def consumer_config(bootstrap_servers: str, settings: Mapping[str, str]) -> dict[str, object]:
    return {
        "group.id": READER_GROUP_ID,
        **resolved_settings(settings),
        "bootstrap.servers": bootstrap_servers,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        # Out-of-range starts must surface as errors: they are data loss, not a reset.
        "auto.offset.reset": "error",
        "enable.partition.eof": True,
    }


def producer_config(bootstrap_servers: str, settings: Mapping[str, str]) -> dict[str, object]:
    # Idempotence keeps a task's retries from writing duplicates (Spark's sink is
    # still at-least-once across task retries, like Spark's Kafka sink).
    return {
        "enable.idempotence": True,
        "linger.ms": 5,
        **resolved_settings(settings),
        "bootstrap.servers": bootstrap_servers,
    }
