"""Both metadata stores publish image changes through ImageSubscribers."""

from __future__ import annotations

import asyncio

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.metadata_store import ImageSubscribers

OLD, NEW = MetadataImage("c", 0), MetadataImage("c", 1)


def test_listeners_hear_every_change_in_subscription_order_and_may_subscribe_others() -> None:
    subscribers = ImageSubscribers()
    heard: list[str] = []

    def first(old: MetadataImage, new: MetadataImage) -> None:
        heard.append(f"first {old.controller_id}->{new.controller_id}")
        subscribers.subscribe(lambda old, new: heard.append("late"))

    subscribers.subscribe(first)
    subscribers.subscribe(lambda old, new: heard.append("second"))
    subscribers.publish(OLD, NEW)
    assert heard == ["first 0->1", "second"]

    heard.clear()
    subscribers.publish(NEW, OLD)
    assert heard == ["first 1->0", "second", "late"]


def test_a_waiter_hears_only_the_next_change_and_is_then_forgotten() -> None:
    async def scenario() -> tuple[bool, bool, int]:
        subscribers = ImageSubscribers()
        waiter = subscribers.next_change()
        before = waiter.done()
        subscribers.publish(OLD, NEW)
        return before, waiter.done(), len(subscribers._waiters)

    assert asyncio.run(scenario()) == (False, True, 0)
