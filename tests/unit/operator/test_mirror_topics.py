from __future__ import annotations

from odradek.operator.models import MirrorMakerSpec
from odradek.operator.planning.mirror_topics import mirrored_topics


def _spec(naming: str) -> MirrorMakerSpec:
    return MirrorMakerSpec.model_validate(
        {
            "source": {"alias": "east", "bootstrapServers": "east:9092"},
            "target": {"alias": "west", "bootstrapServers": "west:9092"},
            "topics": {"include": ["orders.*"], "exclude": [".*-private"]},
            "naming": naming,
        }
    )


def test_mirrored_topics_are_the_prefixed_selected_ones_without_the_mirrors_own_topics() -> None:
    target = {
        "east.orders",
        "east.orders-eu",
        "east.orders-private",
        "east.payments",
        "orders",
        "east.checkpoints.internal",
        "east.offset-syncs.internal",
        "__consumer_offsets",
    }
    assert mirrored_topics(_spec("prefix"), target) == ["east.orders", "east.orders-eu"]


def test_identity_naming_reports_selected_topics_under_their_own_names() -> None:
    target = {"orders", "orders.internal", "payments", "__consumer_offsets"}
    assert mirrored_topics(_spec("identity"), target) == ["orders"]
