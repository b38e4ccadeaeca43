"""Writing a modern group's records (KIP-848 consumer, KIP-932 share groups).

The coordinator changes a group in memory before its records are written, so after a
failed write the log may lack a change memory has: the group's next write then restates
the whole group.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from odradek.broker.protocol.errors import KafkaError

KeyValue = tuple[bytes, bytes | None]
WriteRecords = Callable[[str, Sequence[KeyValue]], Awaitable[None]]


class GroupWrites:
    def __init__(self, write: WriteRecords) -> None:
        self._write = write
        self._needs_snapshot: set[str] = set()

    def restate_next(self, group_id: str) -> None:
        """Make the group's next write restate it whole (it changed without a write)."""
        self._needs_snapshot.add(group_id)

    def forget(self, group_id: str) -> None:
        self._needs_snapshot.discard(group_id)

    async def store(
        self,
        group_id: str,
        written: Sequence[KeyValue],
        snapshot: Callable[[], list[KeyValue]] | None,
    ) -> None:
        """Write the change, followed by the whole group (``snapshot``, if the group still
        has that form) when an earlier write failed."""
        if group_id in self._needs_snapshot and snapshot is not None:
            written = [*written, *snapshot()]
        if not written:
            return
        try:
            await self._write(group_id, written)
        except KafkaError:
            self._needs_snapshot.add(group_id)
            raise
        self._needs_snapshot.discard(group_id)
