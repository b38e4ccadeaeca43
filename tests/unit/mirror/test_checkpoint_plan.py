from __future__ import annotations

from odradek.mirror.checkpointer import plan_checkpoints
from odradek.mirror.internal_topics import (
    Checkpoint,
    offset_sync_from_record,
    offset_sync_record,
)
from odradek.mirror.offset_translation import OffsetMaps, OffsetRun
from odradek.mirror.topic_sync import MirroredTopic

ROUTES = {
    "orders": MirroredTopic("orders", "east.orders", 2, 2),
    "clicks": MirroredTopic("clicks", "east.clicks", 2, 4),  # counts differ: no translation
}


def test_checkpoints_cover_owned_translatable_partitions_of_mirrored_topics() -> None:
    offsets = OffsetMaps()
    for partition in (0, 1):
        for source in range(100):
            offsets.record(("orders", partition), source, source + 7)
    offsets.record(("clicks", 0), 0, 0)
    committed = {("orders", 0): 40, ("orders", 1): 50, ("clicks", 0): 1, ("other", 0): 3}
    owned = {("orders", 0), ("clicks", 0), ("other", 0)}
    points = plan_checkpoints("billing", committed, ROUTES, owned, offsets)
    assert points == [Checkpoint("billing", "east.orders", 0, "orders", 40, 47)]


def test_checkpoint_and_offset_sync_records_round_trip() -> None:
    point = Checkpoint("billing", "east.orders", 3, "orders", 1200, 1187)
    assert Checkpoint.from_record(*point.to_record()) == point
    key, value = offset_sync_record(("orders", 3), OffsetRun(10, 20, 5))
    assert offset_sync_from_record(key, value) == (("orders", 3), OffsetRun(10, 20, 5))
    assert key == b'{"partition":3,"topic":"orders"}'
