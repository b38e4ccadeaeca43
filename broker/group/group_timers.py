"""The coordinator's delayed operations, as event-loop timers.

Per group one deadline at a time (the initial rebalance delay, the rebalance
timeout of a join, or the sync timeout) and, per member id handed out with
MEMBER_ID_REQUIRED, the expiry of that id. Members' session timers live on
the members themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class GroupTimers:
    def __init__(self) -> None:
        self._deadlines: dict[str, asyncio.TimerHandle] = {}
        self._pending: dict[tuple[str, str], asyncio.TimerHandle] = {}

    def set_deadline(
        self, group_id: str, delay_ms: int, callback: Callable[..., None], *args: Any
    ) -> None:
        """Run ``callback(*args)`` after ``delay_ms`` instead of the group's current deadline."""
        self.cancel_deadline(group_id)
        self._deadlines[group_id] = asyncio.get_running_loop().call_later(
            delay_ms / 1000, callback, *args
        )

    def cancel_deadline(self, group_id: str) -> None:
        timer = self._deadlines.pop(group_id, None)
        if timer is not None:
            timer.cancel()

    def expire_pending(
        self, group_id: str, member_id: str, delay_ms: int, callback: Callable[[], None]
    ) -> None:
        def expire() -> None:
            del self._pending[(group_id, member_id)]
            callback()

        self._pending[(group_id, member_id)] = asyncio.get_running_loop().call_later(
            delay_ms / 1000, expire
        )

    def cancel_pending(self, group_id: str, member_id: str) -> None:
        timer = self._pending.pop((group_id, member_id), None)
        if timer is not None:
            timer.cancel()

    def forget(self, group_id: str) -> None:
        """Cancel every timer of the group."""
        self.cancel_deadline(group_id)
        for key in [key for key in self._pending if key[0] == group_id]:
            self._pending.pop(key).cancel()
