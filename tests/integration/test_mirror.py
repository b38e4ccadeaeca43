"""`odradek mirror` between two real single-broker clusters: what is copied, and where."""

from __future__ import annotations

import time

from broker_process import Broker
from confluent_kafka.admin import AdminClient, ConfigResource  # type: ignore[attr-defined]
from mirror_harness import (
    MirrorFactory,
    MirrorRunner,
    create_topic,
    produce,
    read_all,
    record_count,
    topic_names,
    wait_until,
)

from odradek.mirror.constants import PROVENANCE_HEADER

pytest_plugins = ("mirror_harness",)  # fixtures: east_and_west, mirror_factory


def _orders(count: int) -> list[dict[str, object]]:
    base = 1_700_000_000_000
    return [
        {
            "key": f"customer-{i % 37}".encode(),
            "value": f"order-{i}".encode(),
            "headers": [("trace", f"t{i}".encode()), ("empty", b"")],
            "timestamp": base + i,
        }
        for i in range(count)
    ]


def test_topic_is_mirrored_with_keys_headers_timestamps_partitions_and_provenance(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "orders", 6, **{"retention.ms": "3600000"})
    produce(source, "orders", _orders(600))
    mirror = mirror_factory(source, target, topics={"include": ["orders"]})
    wait_until(lambda: record_count(target, "east.orders") >= 600, 60, "600 mirrored records")

    originals = read_all(source, "orders")
    copies = read_all(target, "east.orders")
    assert len(copies) == 600
    for original, copy in zip(originals, copies, strict=True):
        assert (copy.partition(), copy.offset()) == (original.partition(), original.offset())
        assert copy.key() == original.key() and copy.value() == original.value()
        assert copy.timestamp() == original.timestamp()
        *headers, provenance = copy.headers() or []
        assert headers == original.headers()
        expected = f"east/orders/{original.partition()}/{original.offset()}".encode()
        assert provenance == (PROVENANCE_HEADER, expected)

    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, "east.orders")
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["retention.ms"].value == "3600000"
    assert mirror.metric("odradek_mirror_records_total", topic="orders") == 600
    assert mirror.metric("odradek_mirror_replication_latency_seconds_count") == 600
    wait_until(
        lambda: 'odradek_mirror_lag_records{topic="orders"} 0.0' in mirror.metrics_text(),
        10,
        "the lag gauge to show zero",
    )


def test_a_topic_created_on_the_source_later_is_picked_up_by_the_rescan(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "rescan-first", 2)
    mirror_factory(source, target, topics={"include": ["rescan-.*"], "exclude": [".*private"]})
    create_topic(source, "rescan-later", 3)
    create_topic(source, "rescan-private", 1)
    produce(source, "rescan-later", [{"key": b"k", "value": str(i).encode()} for i in range(10)])
    wait_until(lambda: record_count(target, "east.rescan-later") == 10, 60, "new topic mirrored")
    names = topic_names(target)
    assert {"east.rescan-first", "east.rescan-later"} <= names
    assert "east.rescan-private" not in names


def _mirror_both_ways(
    east: Broker, west: Broker, mirror_factory: MirrorFactory, topic: str, naming: str
) -> tuple[MirrorRunner, MirrorRunner]:
    """``topic`` on both clusters, mirrored each way; 50 records produced on east, 30 on west."""
    for broker in (east, west):
        create_topic(broker, topic, 2)
    only = {"include": [topic]}
    forward = mirror_factory(east, west, naming=naming, topics=only)
    backward = mirror_factory(
        west, east, naming=naming, topics=only, source={"alias": "west"}, target={"alias": "east"}
    )
    produce(east, topic, [{"value": f"e{i}".encode()} for i in range(50)])
    produce(west, topic, [{"value": f"w{i}".encode()} for i in range(30)])
    return forward, backward


def test_two_clusters_mirroring_each_other_with_prefixes_do_not_loop(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    east, west = east_and_west
    _mirror_both_ways(east, west, mirror_factory, "aa-events", "prefix")
    wait_until(lambda: record_count(west, "east.aa-events") == 50, 60, "east's events on west")
    wait_until(lambda: record_count(east, "west.aa-events") == 30, 60, "west's events on east")
    time.sleep(3)  # three rescans: a loop would have created west.east.aa-events by now
    for broker in (east, west):
        assert not [n for n in topic_names(broker) if "aa-" in n and n.count(".") > 1]
    assert record_count(west, "east.aa-events") == 50 and record_count(east, "west.aa-events") == 30
    assert record_count(east, "aa-events") == 50 and record_count(west, "aa-events") == 30


def test_identity_naming_both_ways_stops_records_at_their_origin(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    east, west = east_and_west
    forward, backward = _mirror_both_ways(east, west, mirror_factory, "id-events", "identity")
    wait_until(lambda: record_count(east, "id-events") == 80, 60, "west's records on east")
    wait_until(lambda: record_count(west, "id-events") == 80, 60, "east's records on west")
    wait_until(
        lambda: (
            forward.metric("odradek_mirror_records_skipped_total") == 30
            and backward.metric("odradek_mirror_records_skipped_total") == 50
        ),
        30,
        "each mirror to skip the records that came from its target",
    )
    assert record_count(east, "id-events") == 80 and record_count(west, "id-events") == 80


def test_two_mirror_processes_share_the_partitions_through_their_group(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "shared-orders", 6)
    only = {"include": ["shared-.*"]}
    first = mirror_factory(source, target, name="shared", topics=only)
    second = mirror_factory(source, target, name="shared", topics=only)
    owned = "odradek_mirror_assigned_partitions"
    wait_until(
        lambda: (
            first.metric(owned) > 0
            and second.metric(owned) > 0
            and first.metric(owned) + second.metric(owned) == 6
        ),
        60,
        "both processes to own partitions",
    )
    produce(source, "shared-orders", _orders(600))
    wait_until(lambda: record_count(target, "east.shared-orders") >= 600, 60, "600 records")
    mirrored = "odradek_mirror_records_total"
    wait_until(
        lambda: first.metric(mirrored) + second.metric(mirrored) >= 600, 30, "acknowledgements"
    )
    assert first.metric(mirrored) > 0 and second.metric(mirrored) > 0
    values = {m.value() for m in read_all(target, "east.shared-orders")}
    assert values == {f"order-{i}".encode() for i in range(600)}
