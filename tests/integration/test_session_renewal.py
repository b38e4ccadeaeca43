"""A broker's etcd session on a real etcd: kept through stalls, lost and renewed with one
lease refresher at a time.

A session can end two ways: etcd answers a refresh with TTL 0, or the watch sees the
broker's registration deleted (its lease expired). When the watch saw it first, the old
lease's refresher used to run on beside the new one, and a refresh of the old lease still
in flight could end the new session as soon as it began.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time

from odradek.broker.cluster.etcd_client import EtcdClient
from odradek.broker.cluster.etcd_store import EtcdMetadataStore
from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.cli.etcd_process import EtcdProcess

# long, so that the old refresher, which refreshed as the session started, sleeps through
# the whole test: it cannot end early on its own by refreshing the revoked lease
SESSION_TTL_S = 60
SHORT_TTL_S = 2
HEARTBEAT_S = 0.1
STALL_S = 1.6


def refreshers() -> list[asyncio.Task[object]]:
    return [
        task
        for task in asyncio.all_tasks()
        if task.get_coro().__qualname__ == "EtcdMetadataStore._keep_alive"  # type: ignore[union-attr]
    ]


def test_a_session_lost_through_the_watch_is_renewed_with_one_refresher(
    etcd: EtcdProcess,
) -> None:
    async def scenario() -> None:
        broker = BrokerRegistration(1, "127.0.0.1", 9092, directory_id="d1")
        store = EtcdMetadataStore(
            EtcdClient([etcd.endpoint]), "renewal", broker, SESSION_TTL_S, SESSION_TTL_S / 3
        )
        admin = EtcdClient([etcd.endpoint])
        try:
            await store.start()
            await asyncio.sleep(1)  # its first refresh done, the refresher sleeps for 20 s
            assert len(refreshers()) == 1
            first_lease, first_epoch = store.lease, store.registration_epoch

            await admin.revoke(first_lease)  # the registration goes: the watch tells
            await asyncio.wait_for(store.session_lost.wait(), 5)
            await store.renew_session()
            await asyncio.sleep(0)
            assert store.lease != first_lease
            assert store.registration_epoch > first_epoch
            assert not store.session_lost.is_set()
            assert len([task for task in refreshers() if not task.done()]) == 1
            assert await admin.keep_alive(store.lease) > 0
        finally:
            await store.stop()
            await admin.close()

    asyncio.run(scenario())


def test_a_stall_of_etcd_and_the_broker_together_shorter_than_the_session_keeps_it(
    etcd: EtcdProcess,
) -> None:
    """etcd and the broker's event loop stall at once, as every process of a busy machine
    does now and then: the lease survives each stall that ends a heartbeat before it would
    expire. (A soak lost a 2 s session to a 1.2 s stall of the whole machine when leases
    were refreshed every third of their TTL: one could be 0.67 s old as the stall began.
    Here such a refresher loses the session in about four stalls of ten.)"""

    async def scenario() -> None:
        broker = BrokerRegistration(1, "127.0.0.1", 9092, directory_id="d1")
        store = EtcdMetadataStore(
            EtcdClient([etcd.endpoint]), "stalls", broker, SHORT_TTL_S, HEARTBEAT_S
        )
        rng = random.Random()
        try:
            await store.start()
            registration = store.registration_epoch
            for _ in range(8):
                await asyncio.sleep(rng.uniform(0.5, 1.0))  # the stall begins anywhere
                etcd.process.signal(signal.SIGSTOP)
                try:
                    time.sleep(STALL_S)  # the loop stalls with etcd
                finally:
                    etcd.process.signal(signal.SIGCONT)
                # an expired lease is revoked at etcd's next check, within half a second,
                # and refreshing it waits for that: the refresher or the watch would tell
                await asyncio.sleep(0.6)
                assert not store.session_lost.is_set()
            assert store.registration_epoch == registration
        finally:
            await store.stop()

    asyncio.run(scenario())
