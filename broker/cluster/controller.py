"""The controller: one broker, elected through etcd, that reassigns leadership.

Every broker runs this loop. It takes the leased ``controller`` key when it is
free (the first to create it wins; the lease dies with its broker), and while
it holds it, it answers every change of the broker set with the elections of
``leader_election`` and, periodically, moves leadership back to preferred
replicas. Its partition writes are transactions that also check the
controller key is still its own, so a deposed controller cannot write.

A broker registration starts fenced, like a restarted broker in Kafka: it may
follow but not lead or count as in sync. The controller first takes away
whatever the broker's earlier registration led or was in sync for (its disk may
be empty now, or behind), then unfences it; leaders add it back to their ISRs
once it has caught up. A registration that continues the same process run after etcd
ended its session is unfenced at once (``registration_history``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from odradek.broker.cluster.etcd_client import EtcdError
from odradek.broker.cluster.etcd_store import EtcdMetadataStore
from odradek.broker.cluster.leader_election import (
    Change,
    holds_partitions,
    plan_elections,
    plan_preferred_leaders,
)
from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.reassignment import plan_reassignment_completions
from odradek.broker.cluster.registration_history import RegistrationHistory

log = logging.getLogger(__name__)
# etcd refuses transactions of more than 128 operations (--max-txn-ops).
MAX_CHANGES_PER_TRANSACTION = 60


class Controller:
    def __init__(
        self,
        store: EtcdMetadataStore,
        node_id: int,
        unclean_allowed: Callable[[str], bool],
        rebalance_interval_s: float | None,
    ) -> None:
        self._store = store
        self._node_id = node_id
        self._unclean_allowed = unclean_allowed
        self._rebalance_interval_s = rebalance_interval_s
        self._revision: int | None = None
        self._changed = asyncio.Event()
        self._last_rebalance = 0.0
        self._history = RegistrationHistory()
        store.subscribe(self._on_change)

    @property
    def is_active(self) -> bool:
        return self._revision is not None and self._store.image.controller_id == self._node_id

    async def run(self) -> None:
        while True:
            self._changed.clear()  # before the step: a change during it runs another
            try:
                await self._step()
            except EtcdError as error:
                log.warning("controller step failed: %s", error)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._changed.wait()

    async def _step(self) -> None:
        image = self._store.image
        if image.controller_id != self._node_id:
            if self._revision is not None and self._store.seen_revision < self._revision:
                return  # the image has not caught up with our own election yet
            if self._revision is not None:
                log.warning("broker %d is no longer the controller", self._node_id)
            self._revision = None
            if image.controller_id == -1:
                self._revision = await self._store.try_become_controller()
                if self._revision is not None:
                    log.info(
                        "broker %d is the controller (epoch %d)",
                        self._node_id, self._store.controller_epoch,
                    )  # fmt: skip
            return
        if self._revision is None:
            return  # the key names us but from an earlier session; it expires with it
        brokers = self._store.live_brokers()
        fenced = image.fenced_brokers()
        continuing = self._history.continuing(image, fenced)
        live = (set(brokers) - fenced) | continuing | self._history.awaited()
        shutting_down = {broker for broker, leaving in brokers.items() if leaving}
        await self._write(plan_elections(image, live, shutting_down, self._unclean_allowed))
        await self._unfence(fenced, continuing)
        await self._write(plan_reassignment_completions(self._store.image, live))
        if self._rebalance_due():
            await self._write(plan_preferred_leaders(self._store.image, live))

    async def _unfence(self, fenced: set[int], continuing: set[int]) -> None:
        """Unfence each broker once the image shows its earlier leaderships taken away, or
        at once when its registration continues a run (``RegistrationHistory``)."""
        image = self._store.image
        for broker in sorted(fenced):
            if (
                self._revision is not None
                and (broker in continuing or not holds_partitions(image, broker))
                and await self._store.unfence_as_controller(self._revision, broker)
            ):
                log.info(
                    "broker %d unfenced (registration %d)", broker, image.brokers[broker].epoch
                )

    def _rebalance_due(self) -> bool:
        if self._rebalance_interval_s is None:
            return False
        now = asyncio.get_running_loop().time()
        if now - self._last_rebalance < self._rebalance_interval_s:
            return False
        self._last_rebalance = now
        return True

    async def _write(self, changes: list[Change]) -> None:
        for start in range(0, len(changes), MAX_CHANGES_PER_TRANSACTION):
            await self._write_batch(changes[start : start + MAX_CHANGES_PER_TRANSACTION])

    async def _write_batch(self, changes: list[Change]) -> None:
        if not changes or self._revision is None:
            return
        if await self._store.update_partitions_as_controller(self._revision, changes):
            for topic, old, new in changes:
                log.info(
                    "%s-%d: leader %d -> %d (epoch %d), isr %s",
                    topic, new.partition, old.leader, new.leader, new.leader_epoch, list(new.isr),
                )  # fmt: skip

    def _on_change(self, old: MetadataImage, new: MetadataImage) -> None:
        self._history.observe(old, new)
        self._changed.set()
