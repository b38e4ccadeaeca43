"""Cluster metadata in etcd, like ZooKeeper in classic Kafka.

Layout under ``/odradek/<cluster>/``: ``brokers/<id>`` (leased: the broker's
liveness), ``controller`` (leased, created with a compare-and-set),
``controller_epoch``, ``topics/<name>`` (id, partition count, configs),
``partitions/<topic>/<p>`` (replicas, leader, leader epoch, ISR), ``creating/<topic>``
(leased: a broker is writing more partition keys of the topic than one transaction
takes), ``unfenced/<id>`` (the registration of that broker the controller has
unfenced), ``configs/<resource>`` (dynamic broker configs), ``group_configs/<group>``
(a group's dynamic configs, the group id percent-encoded), ``scram/<mechanism>/<user>``
(SCRAM credentials; the user name percent-encoded, as Kafka encoded it in ZooKeeper
paths), ``acls/<digest>`` (one ACL binding each, named by a digest of it),
``quotas/<entity>`` (client quotas, e.g. ``quotas/client-id=app&user``: a type without a
name is its default), ``producer_ids`` and ``cluster_id``. Every broker keeps a local
image of it, fed by one watch; every write of partition state is a compare-and-set on
the revision the image was built from.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, unquote

from odradek.broker.cluster.etcd_client import (
    Compare,
    EtcdClient,
    EtcdError,
    KeyValue,
    WatchCompacted,
    delete_op,
    key_absent,
    put_op,
    unchanged_since,
)
from odradek.broker.cluster.metadata_image import (
    BrokerEndpoint,
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    ScramCredentialKey,
    TopicMetadata,
)
from odradek.broker.cluster.metadata_store import ImageSubscribers, Listener
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.acl_model import AclBinding
from odradek.broker.security.client_quota import (
    QuotaEntity,
    QuotaValues,
    decode_client_quota,
    encode_client_quota,
)
from odradek.broker.security.scram_credential import ScramCredential, ScramMechanism

log = logging.getLogger(__name__)

NO_CONTROLLER = -1
WATCH_RETRY_S = 0.5
# etcd refuses transactions of more than 128 operations (``--max-txn-ops``); a topic's
# partition keys beyond this many are written in steps (``_write_partitions``).
PARTITION_KEYS_PER_TRANSACTION = 120
# How often the watch is checked against etcd; one that misses a change for this long is
# restarted on another member.
WATCH_CHECK_S = 2.0


class EtcdMetadataStore:
    """A broker's view of, and writes to, the cluster metadata in etcd."""

    def __init__(
        self,
        client: EtcdClient,
        cluster: str,
        broker: BrokerRegistration,
        session_ttl_s: int,
        heartbeat_s: float,
    ) -> None:
        self._client = client
        self._prefix = f"/odradek/{cluster}/"
        self._broker = broker
        self._ttl = session_ttl_s
        self._heartbeat_s = heartbeat_s  # how often the lease is refreshed
        self._subscribers = ImageSubscribers()
        self._image = MetadataImage(cluster_id="", controller_id=NO_CONTROLLER)
        self._kvs: dict[str, KeyValue] = {}
        self._touched: TouchedKeys | None = None  # since the image was built; None: all
        self.seen_revision = 0  # the etcd revision the image has caught up with
        self._lease = 0
        self._tasks: list[asyncio.Task[None]] = []  # the watch first
        self._keeping_alive: asyncio.Task[None] | None = None  # the current lease's refresher
        self._watch_endpoint = ""
        self._shutting_down = False
        self._offline_replicas: frozenset[tuple[str, int]] = frozenset()
        self.session_lost = asyncio.Event()
        self.controller_epoch = 0
        self.registration_epoch = 0  # this broker's current registration (see BrokerRegistration)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Register this broker (leased) and load the image; the watch keeps it current."""
        for key, value in (
            ("cluster_id", uuid.uuid4().hex[:22].encode()),
            ("scram_decoy_secret", secrets.token_bytes(32)),
        ):
            await self._client.txn([key_absent(self._key(key))], [put_op(self._key(key), value)])
        if not await self._register():
            raise KafkaError(
                ErrorCode.inconsistent_cluster_id,
                f"broker id {self._broker.node_id} is already registered in etcd "
                "(another broker with this node.id is running, or its session has not expired)",
            )
        revision = await self._reload()
        self._tasks = [
            asyncio.create_task(self._watch(revision)),
            asyncio.create_task(self._check_watch()),
        ]
        self._keeping_alive = asyncio.create_task(self._keep_alive(self._lease))

    async def renew_session(self) -> None:
        """Register again under a new lease after the old one expired; the old lease's
        refresher stops (the session may have been lost through the watch while it still
        ran, with a refresh of the old lease in flight that would end the new session)."""
        if not await self._register():
            raise EtcdError("the old registration has not expired yet")
        if self._keeping_alive is not None:
            self._keeping_alive.cancel()
        self.session_lost.clear()
        self._keeping_alive = asyncio.create_task(self._keep_alive(self._lease))
        log.info("broker %d registered again", self._broker.node_id)

    async def _register(self) -> bool:
        """Create this broker's key under a new lease, unless another registration exists;
        on success ``registration_epoch`` is the key's create revision."""
        self._lease = await self._client.grant_lease(self._ttl)
        key = self._broker_key(self._broker.node_id)
        for _ in range(2):
            if await self._client.txn(
                [key_absent(key)], [put_op(key, self._registration(), self._lease)]
            ):
                created = await self._client.get(key)
                if created is not None and created.lease == self._lease:
                    self.registration_epoch = created.create_revision
                    return True
            if not await self._remove_earlier_run(key):
                break
        await self._client.revoke(self._lease)
        return False

    async def _remove_earlier_run(self, key: str) -> bool:
        """Delete the registration at ``key`` if an earlier run of this broker left it.

        It names this broker's log directory, which this process holds locked, so its
        process is gone; etcd would delete it once its lease expired, but a lease etcd
        fails to expire (it can, under load or when the clock steps back) would keep this
        broker out for good. Deleting it, rather than overwriting it, gives the new
        registration a new epoch, as a restart must.
        """
        existing = await self._client.get(key)
        if existing is None:
            return True
        registered = _decode_broker(existing)
        if not self._broker.directory_id or registered.directory_id != self._broker.directory_id:
            return False
        log.warning(
            "broker %d: removing the registration an earlier run left (lease %x)",
            self._broker.node_id,
            existing.lease,
        )
        await self._client.txn([unchanged_since(key, existing.mod_revision)], [delete_op(key)])
        if existing.lease:
            with contextlib.suppress(EtcdError):  # it may have expired meanwhile
                await self._client.revoke(existing.lease)
        return True

    async def stop(self) -> None:
        tasks = [*self._tasks, *filter(None, [self._keeping_alive])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(EtcdError):
            await self._client.revoke(self._lease)
        await self._client.close()

    @property
    def lease(self) -> int:
        return self._lease

    async def announce_shutdown(self) -> None:
        """Mark this broker as shutting down so the controller moves its leaderships."""
        self._shutting_down = True
        await self._client.put(
            self._broker_key(self._broker.node_id), self._registration(), self._lease
        )

    async def announce_offline_replicas(self, replicas: Collection[tuple[str, int]]) -> None:
        """Name the replicas an offline log dir holds, so the controller moves them away."""
        self._offline_replicas = frozenset(replicas)
        await self._client.put(
            self._broker_key(self._broker.node_id), self._registration(), self._lease
        )

    def _registration(self) -> bytes:
        return _encode_broker(self._broker, self._shutting_down, self._offline_replicas)

    # --- MetadataStore --------------------------------------------------------------------

    @property
    def image(self) -> MetadataImage:
        return self._image

    def subscribe(self, listener: Listener) -> None:
        self._subscribers.subscribe(listener)

    async def create_topic(self, topic: TopicMetadata) -> None:
        name = topic.name
        topic_put = put_op(self._topic_key(name), _encode_topic(topic))
        if not await self._write_partitions(
            name, topic.partitions, key_absent(self._topic_key(name)), topic_put
        ):
            # Created by another broker a moment ago: let callers find it in the image.
            with contextlib.suppress(TimeoutError):
                await self._wait_for(lambda image: name in image.topics)
            raise KafkaError(ErrorCode.topic_already_exists, f"topic {name!r} already exists")
        await self._wait_for(lambda image: name in image.topics)

    async def delete_topic(self, name: str) -> None:
        kv = self._kvs.get(self._topic_key(name))
        if kv is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        ops = [delete_op(self._topic_key(name)), delete_op(self._key(f"partitions/{name}/"), True)]
        await self._client.txn([], ops)
        await self._wait_for(lambda image: name not in image.topics)

    async def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        topic = self._existing_topic(name)
        updated = replace(topic, configs=configs)
        await self._client.put(self._topic_key(name), _encode_topic(updated))
        await self._wait_for(lambda image: image.topics.get(name, topic).configs == configs)

    async def set_broker_configs(self, resource: str, configs: dict[str, str]) -> None:
        await self._client.put(self._key(f"configs/{resource}"), json.dumps(configs).encode())
        await self._wait_for(lambda image: image.broker_configs.get(resource) == configs)

    async def set_group_configs(self, group_id: str, configs: dict[str, str]) -> None:
        key = self._key(f"group_configs/{quote(group_id, safe='')}")
        if configs:
            await self._client.put(key, json.dumps(configs).encode())
        else:
            await self._client.delete(key)
        await self._wait_for(lambda image: image.group_configs.get(group_id, {}) == configs)

    async def alter_scram_credentials(
        self,
        upsertions: Mapping[ScramCredentialKey, ScramCredential],
        deletions: Collection[ScramCredentialKey],
    ) -> bool:
        removed = [self._kvs.get(self._scram_key(*key)) for key in deletions]
        expected = [kv for kv in removed if kv is not None]
        if len(expected) < len(removed):
            return False
        compares = [unchanged_since(kv.key, kv.mod_revision) for kv in expected]
        ops = [put_op(self._scram_key(*key), c.to_json().encode()) for key, c in upsertions.items()]
        ops += [delete_op(kv.key) for kv in expected]
        if not await self._client.txn(compares, ops):
            # Another broker changed one first: once the watch shows it, the caller decides again.
            await self._wait_for(lambda _: any(self._kvs.get(kv.key) is not kv for kv in expected))
            return False
        await self._wait_for(
            lambda image: (
                all(image.scram_credentials.get(k) == c for k, c in upsertions.items())
                and not any(key in image.scram_credentials for key in deletions)
            )
        )
        return True

    async def alter_acls(
        self, additions: Collection[AclBinding], deletions: Collection[AclBinding]
    ) -> None:
        ops = [put_op(self._acl_key(b), json.dumps(b.to_json()).encode()) for b in additions]
        ops += [delete_op(self._acl_key(binding)) for binding in deletions]
        if ops:
            await self._client.txn([], ops)
        await self._wait_for(
            lambda image: image.acls.issuperset(additions) and image.acls.isdisjoint(deletions)
        )

    async def alter_client_quotas(
        self, changes: Mapping[QuotaEntity, QuotaValues], expected: MetadataImage
    ) -> bool:
        compares, ops = [], []
        for entity, values in changes.items():
            key = self._client_quota_key(entity)
            kv = self._kvs.get(key)
            stored = decode_client_quota(json.loads(kv.value))[1] if kv is not None else None
            if stored != expected.client_quotas.get(entity):
                return False
            compares.append(unchanged_since(key, kv.mod_revision) if kv else key_absent(key))
            if values:
                ops.append(put_op(key, json.dumps(encode_client_quota(entity, values)).encode()))
            elif kv is not None:
                ops.append(delete_op(key))
        if not await self._client.txn(compares, ops):
            # Another broker changed one first: once the watch shows it, the caller decides again.
            await self._wait_for(lambda image: image.client_quotas != expected.client_quotas)
            return False
        await self._wait_for(
            lambda image: all(
                image.client_quotas.get(entity, {}) == values for entity, values in changes.items()
            )
        )
        return True

    async def add_partitions(self, name: str, partitions: tuple[PartitionState, ...]) -> None:
        topic = self._existing_topic(name)
        updated = replace(topic, partitions=topic.partitions + partitions)
        topic_kv = self._kvs[self._topic_key(name)]
        unchanged = unchanged_since(topic_kv.key, topic_kv.mod_revision)
        topic_put = put_op(self._topic_key(name), _encode_topic(updated))
        if not await self._write_partitions(name, partitions, unchanged, topic_put):
            raise KafkaError(ErrorCode.reassignment_in_progress, "the topic changed; try again")
        count = len(updated.partitions)
        await self._wait_for(lambda image: len(image.topics[name].partitions) == count)

    async def _write_partitions(
        self,
        name: str,
        states: tuple[PartitionState, ...],
        condition: Compare,
        topic_put: dict[str, Any],
    ) -> bool:
        """Put the keys of ``states``, then ``topic_put`` (the topic's key, whose partition
        count makes them part of the image), while ``condition`` holds and no other such
        write of the topic is under way; False, having shown nothing, if either fails.

        More keys than one transaction takes (etcd's ``--max-txn-ops``) are put in steps
        while this broker holds ``creating/<topic>``, leased to its session. Keys left by
        a broker that died meanwhile are never shown (the topic's key does not count
        them), and the next such write of the topic puts them again."""
        puts = [
            put_op(self._partition_key(name, s.partition), _encode_partition(s)) for s in states
        ]
        lock = self._key(f"creating/{name}")
        if len(puts) < PARTITION_KEYS_PER_TRANSACTION:
            return await self._client.txn([condition, key_absent(lock)], [topic_put, *puts])
        token = uuid.uuid4().hex.encode()
        if not await self._client.txn(
            [condition, key_absent(lock)], [put_op(lock, token, self._lease)]
        ):
            return False
        held = Compare(lock, "VALUE", token)
        shown = False
        try:
            for first in range(0, len(puts), PARTITION_KEYS_PER_TRANSACTION):
                step = puts[first : first + PARTITION_KEYS_PER_TRANSACTION]
                if not await self._client.txn([held], step):
                    raise KafkaError(
                        ErrorCode.request_timed_out,
                        f"writing the partitions of {name!r}: this broker's etcd session "
                        "ended meanwhile; try again",
                    )
            shown = await self._client.txn([held, condition], [topic_put, delete_op(lock)])
            return shown
        finally:
            if not shown:  # the last step drops the lock when it succeeds
                with contextlib.suppress(EtcdError):
                    await self._client.txn([held], [delete_op(lock)])

    async def update_partition(
        self, topic: str, expected: PartitionState, state: PartitionState
    ) -> bool:
        key = self._partition_key(topic, state.partition)
        kv = self._kvs.get(key)
        current = self._image.topics.get(topic)
        if kv is None or current is None or current.partitions[state.partition] != expected:
            return False
        return await self._client.txn(
            [unchanged_since(key, kv.mod_revision)], [put_op(key, _encode_partition(state))]
        )

    async def partition_unchanged(self, topic: str, partition: int) -> bool:
        """Whether etcd holds the partition state the image has (a write whose answer was
        lost did not happen)."""
        key = self._partition_key(topic, partition)
        stored, seen = await self._client.get(key), self._kvs.get(key)
        return stored is not None and seen is not None and stored.mod_revision == seen.mod_revision

    async def update_partitions_as_controller(
        self, controller_revision: int, updates: list[tuple[str, PartitionState, PartitionState]]
    ) -> bool:
        """Write several partition states at once, only while our controllership holds."""
        compares: list[Compare] = [unchanged_since(self._key("controller"), controller_revision)]
        ops = []
        for topic, expected, state in updates:
            key = self._partition_key(topic, state.partition)
            kv = self._kvs.get(key)
            current = self._image.topics.get(topic)
            if kv is None or current is None or current.partitions[state.partition] != expected:
                return False
            compares.append(unchanged_since(key, kv.mod_revision))
            ops.append(put_op(key, _encode_partition(state)))
        return await self._client.txn(compares, ops)

    async def reserve_producer_ids(self, count: int) -> int:
        key = self._key("producer_ids")
        while True:
            kv = await self._client.get(key)
            first = int(kv.value) if kv else 0
            condition = unchanged_since(key, kv.mod_revision) if kv else key_absent(key)
            if await self._client.txn([condition], [put_op(key, str(first + count).encode())]):
                return first

    async def unfence_as_controller(self, controller_revision: int, broker: int) -> bool:
        """Record that ``broker``'s current registration may lead and join ISRs."""
        registration = self._image.brokers.get(broker)
        if registration is None:
            return False
        return await self._client.txn(
            [
                unchanged_since(self._key("controller"), controller_revision),
                Compare(self._broker_key(broker), "CREATE", registration.epoch),
            ],
            [put_op(self._key(f"unfenced/{broker}"), str(registration.epoch).encode())],
        )

    # --- controller election ---------------------------------------------------------------

    async def try_become_controller(self) -> int | None:
        """Take the controller key if nobody holds it; returns its revision when we won."""
        key = self._key("controller")
        epoch_key = self._key("controller_epoch")
        epoch_kv = await self._client.get(epoch_key)
        epoch = int(epoch_kv.value) + 1 if epoch_kv else 1
        record = json.dumps({"node_id": self._broker.node_id, "epoch": epoch}).encode()
        won = await self._client.txn(
            [key_absent(key), unchanged_since(epoch_key, epoch_kv.mod_revision) if epoch_kv
             else key_absent(epoch_key)],
            [put_op(key, record, self._lease), put_op(epoch_key, str(epoch).encode())],
        )  # fmt: skip
        if not won:
            return None
        controller = await self._client.get(key)
        if controller is None or json.loads(controller.value)["node_id"] != self._broker.node_id:
            return None
        self.controller_epoch = epoch
        return controller.mod_revision

    def live_brokers(self) -> dict[int, bool]:
        """Registered brokers and whether each is shutting down."""
        prefix = self._key("brokers/")
        return {
            int(key[len(prefix) :]): bool(json.loads(kv.value).get("shutting_down", False))
            for key, kv in self._kvs.items()
            if key.startswith(prefix)
        }

    # --- internals --------------------------------------------------------------------------

    def _key(self, suffix: str) -> str:
        return self._prefix + suffix

    def _broker_key(self, node_id: int) -> str:
        return self._key(f"brokers/{node_id}")

    def _topic_key(self, name: str) -> str:
        return self._key(f"topics/{name}")

    def _scram_key(self, user: str, mechanism: ScramMechanism) -> str:
        return self._key(f"scram/{mechanism.value}/{quote(user, safe='')}")

    def _client_quota_key(self, entity: QuotaEntity) -> str:
        """``quotas/user=<name>&client-id`` (a type without a name is its default)."""
        parts = (
            kind if name is None else f"{kind}={quote(name, safe='')}" for kind, name in entity
        )
        return self._key(f"quotas/{'&'.join(parts)}")

    def _acl_key(self, binding: AclBinding) -> str:
        """One key per binding, named by a digest of it: adding it twice keeps one."""
        canonical = json.dumps(binding.to_json(), sort_keys=True).encode()
        return self._key(f"acls/{hashlib.sha256(canonical).hexdigest()[:32]}")

    def _partition_key(self, topic: str, partition: int) -> str:
        return self._key(f"partitions/{topic}/{partition}")

    def _existing_topic(self, name: str) -> TopicMetadata:
        topic = self._image.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
        return topic

    async def _wait_for(self, condition: Callable[[MetadataImage], bool]) -> None:
        """Wait until the watch has brought our own write into the image."""
        async with asyncio.timeout(10):
            while not condition(self._image):
                await self._subscribers.next_change()

    async def _reload(self) -> int:
        """Replace the image with one consistent read of the prefix; returns its revision."""
        revision, kvs = await self._client.get_prefix(self._prefix)
        self._kvs = {kv.key: kv for kv in kvs}
        self._touched = None
        self.seen_revision = revision
        self._rebuild()
        return revision

    async def _watch(self, revision: int) -> None:
        """Follow the prefix from ``revision`` on. When the stream breaks, follow it on from
        another member: a watch needs no quorum, so a broker whose member died as etcd lost
        its quorum still learns what the survivors hold (a leadership it was just given,
        say). When its revision was compacted, or it goes silent (``_check_watch``), read
        the whole prefix again first."""
        interrupted = False  # since the last events: later breaks are logged at debug
        while True:
            endpoint = self._client.preferred_endpoint
            self._watch_endpoint = endpoint
            try:
                async for events in self._client.watch_prefix(self._prefix, revision + 1, endpoint):
                    interrupted = False
                    for event in events:
                        if self._touched is not None:
                            self._touched.add(event.kv.key[len(self._prefix) :])
                        if event.deleted:
                            self._kvs.pop(event.kv.key, None)
                        else:
                            self._kvs[event.kv.key] = event.kv
                        revision = max(revision, event.kv.mod_revision)
                    self.seen_revision = revision
                    self._rebuild()
            except WatchCompacted:
                revision = await self._reload_when_etcd_answers()
                continue
            except EtcdError as error:
                report = log.debug if interrupted else log.warning
                report("metadata watch interrupted (%s); resuming from another member", error)
                interrupted = True
                self._client.demote(endpoint)
            await asyncio.sleep(WATCH_RETRY_S)

    async def _reload_when_etcd_answers(self) -> int:
        while True:
            await asyncio.sleep(WATCH_RETRY_S)
            try:
                return await self._reload()
            except EtcdError as error:
                log.debug("cannot read the metadata yet: %s", error)

    async def _check_watch(self) -> None:
        """Restart the watch when etcd holds a change it has not delivered for a whole check
        interval: its member may be paused or cut off from the quorum, which leaves the
        stream open and silent."""
        missed_at: int | None = None  # seen_revision when a missed change was first found
        while True:
            await asyncio.sleep(WATCH_CHECK_S)
            try:
                count, latest = await self._client.prefix_summary(self._prefix, WATCH_CHECK_S)
            except EtcdError:
                continue  # no member answers: nothing to compare with
            # A put it has not delivered shows as a newer revision, a delete as a count.
            behind = latest > self.seen_revision or count != len(self._kvs)
            if not behind:
                missed_at = None
            elif missed_at is None or missed_at != self.seen_revision:
                missed_at = self.seen_revision
            else:
                log.warning(
                    "metadata watch at %s delivered nothing of changes etcd holds; restarting it",
                    self._watch_endpoint,
                )
                self._client.demote(self._watch_endpoint)
                self._restart_watch()
                missed_at = None

    def _restart_watch(self) -> None:
        self._tasks[0].cancel()
        self._tasks[0] = asyncio.create_task(self._rewatch())

    async def _rewatch(self) -> None:
        await self._watch(await self._reload_when_etcd_answers())

    async def _keep_alive(self, lease: int) -> None:
        """Refresh ``lease`` every heartbeat, each member given a third of the TTL to answer.

        A refresh lands at most a heartbeat (plus one member's timeout, when the member
        tried first stopped answering) after the last, so a stall of the whole machine
        (etcd's members and this broker at once) costs the session only when it lasts
        longer than the TTL less that.

        The session is lost only when etcd says the lease has expired. While no member
        answers (etcd lost its quorum, or this broker is cut off from it) the broker keeps
        leading what it leads, as Kafka's brokers do while ZooKeeper is down: a quorum that
        comes back extends every lease, and a broker the rest of the cluster replaced
        meanwhile cannot commit acks=all writes (its followers follow the new leader), and
        learns it lost its session as soon as etcd answers again.
        """
        loop = asyncio.get_running_loop()
        member_timeout = max(self._ttl / 3, 0.2)
        unreachable_since: float | None = None
        while True:
            sent = loop.time()
            try:
                ttl = await self._client.keep_alive(lease, member_timeout)
            except EtcdError as error:
                if unreachable_since is None:
                    unreachable_since = sent
                    log.warning(
                        "cannot refresh the etcd session (%s); leading what this broker leads "
                        "until etcd answers",
                        error,
                    )
                await asyncio.sleep(min(self._heartbeat_s, WATCH_RETRY_S))
                continue
            if unreachable_since is not None:
                log.warning("etcd answers again after %.1f s", sent - unreachable_since)
                unreachable_since = None
            if ttl <= 0:
                self._lose_session("etcd says its lease expired")
                return
            await asyncio.sleep(max(self._heartbeat_s - (loop.time() - sent), 0))

    def _lose_session(self, reason: str) -> None:
        if not self.session_lost.is_set():
            log.error("etcd session of broker %d lost: %s", self._broker.node_id, reason)
            self.session_lost.set()

    def _registration_gone(self) -> bool:
        """Whether the image, caught up past this broker's registration, no longer has it
        (its lease expired and etcd deleted it)."""
        if self.seen_revision < self.registration_epoch:
            return False
        kv = self._kvs.get(self._broker_key(self._broker.node_id))
        return kv is None or kv.create_revision != self.registration_epoch

    def _rebuild(self) -> None:
        """A new image from the keys. Topics and partitions whose keys did not change are
        taken from the old image: decoding 10,000 partitions takes ~80 ms, and every leader
        or ISR change of any partition makes a new image."""
        old = self._image
        if self._touched is None:  # a whole read: nothing is taken as it was
            reuse = TopicReuse({}, TouchedKeys())
        else:
            reuse = TopicReuse(old.topics, self._touched)
        self._image = _image_from(self._prefix, self._kvs, reuse)
        self._touched = TouchedKeys()
        if self.registration_epoch and self._registration_gone():
            self._lose_session("its registration is gone from etcd")
        self._subscribers.publish(old, self._image)


@dataclass
class TouchedKeys:
    """The topics and partitions whose keys (relative to the prefix) changed."""

    topics: set[str] = field(default_factory=set)
    partitions: set[tuple[str, int]] = field(default_factory=set)

    def add(self, key: str) -> None:
        section, _, rest = key.partition("/")
        if section == "topics":
            self.topics.add(rest)
        elif section == "partitions":
            name, _, index = rest.partition("/")
            self.topics.add(name)
            self.partitions.add((name, int(index)))


@dataclass(frozen=True)
class TopicReuse:
    """What a new image may take from the previous one's ``topics``: the topics none of
    whose keys were ``touched``, and the other topics' untouched partitions."""

    topics: Mapping[str, TopicMetadata]
    touched: TouchedKeys

    def topic(self, name: str) -> TopicMetadata | None:
        return None if name in self.touched.topics else self.topics.get(name)

    def partition(self, name: str, index: int) -> PartitionState | None:
        previous = self.topics.get(name)
        if previous is None or index >= len(previous.partitions):
            return None
        return None if (name, index) in self.touched.partitions else previous.partitions[index]


def _image_from(prefix: str, kvs: dict[str, KeyValue], reuse: TopicReuse) -> MetadataImage:
    """The image ``kvs`` hold; what ``reuse`` allows is taken as it was, not decoded."""
    brokers: dict[int, BrokerRegistration] = {}
    topics: dict[str, dict[str, Any] | None] = {}  # None: as in ``unchanged``
    states: dict[tuple[str, int], dict[str, Any]] = {}
    configs: dict[str, dict[str, str]] = {}
    group_configs: dict[str, dict[str, str]] = {}
    unfenced: dict[int, int] = {}
    scram: dict[ScramCredentialKey, ScramCredential] = {}
    acls: set[AclBinding] = set()
    quotas: dict[QuotaEntity, QuotaValues] = {}
    cluster_id, controller, decoy_secret = "", NO_CONTROLLER, b""
    for key, kv in kvs.items():
        path = key[len(prefix) :].split("/")
        data = kv.value
        if path[0] == "brokers":
            registration = _decode_broker(kv)
            brokers[registration.node_id] = registration
        elif path[0] == "unfenced":
            unfenced[int(path[1])] = int(data)
        elif path[0] == "topics":
            topics[path[1]] = None if reuse.topic(path[1]) is not None else json.loads(data)
        elif path[0] == "partitions":
            name, index = path[1], int(path[2])
            if reuse.topic(name) is None and reuse.partition(name, index) is None:
                states[(name, index)] = json.loads(data)
        elif path[0] == "configs":
            configs[path[1]] = json.loads(data)
        elif path[0] == "group_configs":
            group_configs[unquote(path[1])] = json.loads(data)
        elif path[0] == "scram":
            scram[(unquote(path[2]), ScramMechanism(path[1]))] = ScramCredential.from_json(data)
        elif path[0] == "quotas":
            entity, values = decode_client_quota(json.loads(data))
            quotas[entity] = values
        elif path[0] == "acls":
            acls.add(AclBinding.from_json(json.loads(data)))
        elif path[0] == "controller":
            controller = json.loads(data)["node_id"]
        elif path[0] == "cluster_id":
            cluster_id = data.decode()
        elif path[0] == "scram_decoy_secret":
            decoy_secret = data
    image_topics = {}
    for name, item in topics.items():
        if item is None:
            image_topics[name] = reuse.topics[name]
            continue
        partitions = []
        for index in range(item["partitions"]):
            state = states.get((name, index))
            if state is not None:
                partitions.append(PartitionState.from_json({"partition": index, **state}))
            elif (kept := reuse.partition(name, index)) is not None:
                partitions.append(kept)
            else:
                break  # written in the same transaction; absent only mid-deletion
        image_topics[name] = TopicMetadata(
            name,
            uuid.UUID(item["topic_id"]),
            tuple(partitions),
            item["configs"],
            item.get("internal", False),
        )
    return MetadataImage(
        cluster_id,
        controller,
        brokers,
        image_topics,
        configs,
        unfenced,
        scram_credentials=scram,
        acls=frozenset(acls),
        client_quotas=quotas,
        scram_decoy_secret=decoy_secret,
        group_configs=group_configs,
    )


def _encode_broker(
    broker: BrokerRegistration,
    shutting_down: bool = False,
    offline_replicas: Collection[tuple[str, int]] = (),
) -> bytes:
    return json.dumps(
        {
            "node_id": broker.node_id,
            "host": broker.host,
            "port": broker.port,
            "rack": broker.rack,
            "endpoints": [
                {"listener": e.listener, "host": e.host, "port": e.port} for e in broker.endpoints
            ],
            "shutting_down": shutting_down,
            "directory_id": broker.directory_id,
            "offline_replicas": sorted(offline_replicas),
            "incarnation": broker.incarnation,
        }
    ).encode()


def _decode_broker(kv: KeyValue) -> BrokerRegistration:
    item = json.loads(kv.value)
    return BrokerRegistration(
        item["node_id"],
        item["host"],
        item["port"],
        item.get("rack"),
        kv.create_revision,
        tuple(
            BrokerEndpoint(e["listener"], e["host"], e["port"]) for e in item.get("endpoints", ())
        ),
        item.get("directory_id", ""),
        frozenset((topic, partition) for topic, partition in item.get("offline_replicas", ())),
        item.get("incarnation", ""),
    )


def _encode_topic(topic: TopicMetadata) -> bytes:
    return json.dumps(
        {
            "topic_id": str(topic.topic_id),
            "partitions": len(topic.partitions),
            "configs": dict(topic.configs),
            "internal": topic.internal,
        }
    ).encode()


def _encode_partition(state: PartitionState) -> bytes:
    data = state.to_json()
    del data["partition"]  # the key says which
    return json.dumps(data).encode()
