"""A broker's etcd session, lost and renewed, on a real etcd: one lease refresher at a time.

A session can end two ways: etcd answers a refresh with TTL 0, or the watch sees the
broker's registration deleted (its lease expired). When the watch saw it first, the old
lease's refresher used to run on beside the new one, and a refresh of the old lease still
in flight could end the new session as soon as it began.
"""

from __future__ import annotations

import asyncio

from odradek.broker.cluster.etcd_client import EtcdClient
from odradek.broker.cluster.etcd_store import EtcdMetadataStore
from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.cli.etcd_process import EtcdProcess

# long, so that the old refresher, which refreshed as the session started, sleeps through
# the whole test: it cannot end early on its own by refreshing the revoked lease
SESSION_TTL_S = 60


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
        store = EtcdMetadataStore(EtcdClient([etcd.endpoint]), "renewal", broker, SESSION_TTL_S)
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
