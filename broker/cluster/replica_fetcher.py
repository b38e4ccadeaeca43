"""Followers pull from leaders: one fetch loop per leader broker.

Before fetching a partition whose leader or leader epoch changed, the follower
asks the leader for the end offset of its own latest epoch (OffsetForLeaderEpoch)
and truncates what the leader does not have, so replicas never diverge. It then
fetches from its log end with its replica id; the leader answers with batches
up to its log end and its high watermark, which the follower adopts as far as
its own log reaches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from odradek.broker.cluster.fetch_session_handler import FetchSessionHandler, NextFetch
from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.cluster.peer_connection import PeerAuthenticationFailed, PeerConnection
from odradek.broker.cluster.peer_security import PLAINTEXT, PeerSecurity
from odradek.broker.cluster.replication_quota import UNTHROTTLED, ReplicationQuota
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.replica_fetch import (
    FETCH_VERSION,
    FetchedData,
    FetchPosition,
    ReplicaFetchRequest,
    decode_fetch_response,
    encode_fetch_request,
)
from odradek.broker.security.sasl_client import SaslClientError

log = logging.getLogger(__name__)

EPOCH_VERSION = 4
RETRY_BACKOFF_S = 0.2
WARN_EVERY = 50
"""Failures in a row between warnings: 10 s of retrying."""
REFUSED_BACKOFF_MAX_S = 5.0
"""A refused login or TLS handshake is retried ever more slowly, up to this."""
_WAIT_FOR_METADATA = {
    ErrorCode.not_leader_or_follower,
    ErrorCode.fenced_leader_epoch,
    ErrorCode.unknown_leader_epoch,
    ErrorCode.unknown_topic_or_partition,
}


@dataclass(frozen=True)
class FetcherSettings:
    node_id: int
    max_wait_ms: int = 500
    max_bytes: int = 10 * 1024 * 1024
    partition_max_bytes: int = 1024 * 1024
    # The follower's replication quota, and whether a partition's topic lists this
    # broker's replica in follower.replication.throttled.replicas.
    quota: ReplicationQuota = field(default_factory=lambda: ReplicationQuota(lambda: UNTHROTTLED))
    throttled: Callable[[PartitionKey], bool] = lambda key: False
    # The inter-broker listener's TLS and SASL.
    security: PeerSecurity = PLAINTEXT


class ReplicaFetcherManager:
    """Keeps one ``LeaderFetcher`` per leader this broker follows partitions of."""

    def __init__(
        self, settings: FetcherSettings, partition_of: Callable[[PartitionKey], Partition | None]
    ) -> None:
        self.settings = settings
        self.partition_of = partition_of
        self._fetchers: dict[int, LeaderFetcher] = {}
        self._image: MetadataImage | None = None

    def update(self, image: MetadataImage, followed: dict[PartitionKey, tuple[int, int]]) -> None:
        """``followed`` maps partitions this broker follows to (leader, leader epoch)."""
        self._image = image
        by_leader: dict[int, dict[PartitionKey, int]] = {}
        for key, (leader, epoch) in followed.items():
            by_leader.setdefault(leader, {})[key] = epoch
        for leader in list(self._fetchers):
            if leader not in by_leader:
                self._fetchers.pop(leader).stop()
        for leader, partitions in by_leader.items():
            fetcher = self._fetchers.get(leader)
            if fetcher is None:
                fetcher = self._fetchers[leader] = LeaderFetcher(leader, self)
            fetcher.assign(partitions)

    def address_of(self, broker: int) -> tuple[str, int] | None:
        registration = self._image.brokers.get(broker) if self._image else None
        return (registration.host, registration.port) if registration else None

    async def stop(self) -> None:
        fetchers, self._fetchers = list(self._fetchers.values()), {}
        for fetcher in fetchers:
            fetcher.stop()
        await asyncio.gather(*(f.task for f in fetchers), return_exceptions=True)


class LeaderFetcher:
    def __init__(self, leader: int, manager: ReplicaFetcherManager) -> None:
        self.leader = leader
        self._manager = manager
        self._settings = manager.settings
        self._epochs: dict[PartitionKey, int] = {}
        self._to_truncate: set[PartitionKey] = set()
        self._wake = asyncio.Event()
        self._session = FetchSessionHandler(leader)
        self.task = asyncio.create_task(self._run(), name=f"replica-fetcher-{leader}")

    def assign(self, partitions: dict[PartitionKey, int]) -> None:
        for key, epoch in partitions.items():
            if self._epochs.get(key) != epoch:
                self._to_truncate.add(key)
        self._epochs = dict(partitions)
        self._to_truncate &= set(partitions)
        self._wake.set()

    def stop(self) -> None:
        self.task.cancel()

    async def _run(self) -> None:
        connection: PeerConnection | None = None
        failures = 0
        while True:
            try:
                address = self._manager.address_of(self.leader)
                if address is None or not self._epochs:
                    await self._idle()
                    continue
                if connection is None or (connection.host, connection.port) != address:
                    if connection is not None:
                        connection.close()
                    connection = PeerConnection(*address, security=self._settings.security)
                    self._session.failed()
                if self._to_truncate:
                    await self._truncate(connection)
                await self._fetch(connection)
                failures = 0
            except asyncio.CancelledError:
                if connection is not None:
                    connection.close()
                raise
            except Exception as error:  # reported, then retried: the fetcher never stops
                failures += 1
                self._report(error, failures)
                if connection is not None:
                    connection.close()
                    connection = None
                refused = _refused(error)
                await asyncio.sleep(
                    min(RETRY_BACKOFF_S * 2 ** min(failures, 8), REFUSED_BACKOFF_MAX_S)
                    if refused
                    else RETRY_BACKOFF_S
                )

    def _report(self, error: Exception, failures: int) -> None:
        """Losing the connection to a leader that went away is routine (debug); a failure of
        another kind is a warning with its traceback, and so is every WARN_EVERY-th in a row.
        A refused login or TLS handshake is a warning at once, without a traceback."""
        refused = _refused(error)
        routine = refused or isinstance(error, (OSError, asyncio.IncompleteReadError, TimeoutError))
        if ((not routine or refused) and failures == 1) or failures % WARN_EVERY == 0:
            log.warning(
                "fetching from broker %d failed (%d in a row): %s",
                self.leader,
                failures,
                error,
                exc_info=not routine,
            )
        else:
            log.debug("fetching from broker %d failed: %s", self.leader, error)

    async def _idle(self) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1):
                await self._wake.wait()

    def _partitions(self) -> list[tuple[PartitionKey, int, Partition]]:
        found = []
        for key, epoch in self._epochs.items():
            partition = self._manager.partition_of(key)
            # a replica in an offline log directory stays behind, out of the ISR
            if partition is not None and not partition.log.offline:
                found.append((key, epoch, partition))
        return found

    async def _truncate(self, connection: PeerConnection) -> None:
        pending = [item for item in self._partitions() if item[0] in self._to_truncate]
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for key, epoch, partition in pending:
            by_topic.setdefault(key.topic, []).append(
                {
                    "partition": key.partition,
                    "current_leader_epoch": epoch,
                    "leader_epoch": partition.latest_epoch,
                }
            )
        response = await connection.request(
            ApiKey.OFFSET_FOR_LEADER_EPOCH,
            EPOCH_VERSION,
            {
                "replica_id": self._settings.node_id,
                "topics": [{"topic": t, "partitions": p} for t, p in by_topic.items()],
            },
        )
        sent = {key: epoch for key, epoch, _ in pending}
        for topic in response.topics:
            for result in topic.partitions:
                key = PartitionKey(topic.topic, result.partition)
                follower = self._manager.partition_of(key)
                if follower is None or result.error_code != ErrorCode.none:
                    continue
                if not self._still_follows(key, sent):
                    continue  # led by another epoch now (or by this broker): ask again
                follower.truncate_to_leader(result.leader_epoch, result.end_offset)
                self._to_truncate.discard(key)

    def _still_follows(self, key: PartitionKey, sent: dict[PartitionKey, int]) -> bool:
        """Whether this fetcher still follows ``key`` in the leader epoch a request for it
        was sent in: an answer about another epoch must not touch the replica (it may even
        lead the partition now)."""
        return key in sent and self._epochs.get(key) == sent[key]

    def _held_back(self, key: PartitionKey, partition: Partition) -> bool:
        """Whether this out-of-sync replica counts against the follower's quota."""
        settings = self._settings
        return settings.node_id not in partition.state.isr and settings.throttled(key)

    async def _fetch(self, connection: PeerConnection) -> None:
        over_quota = self._settings.quota.exceeded()
        partitions = [
            item
            for item in self._partitions()
            if item[0] not in self._to_truncate
            and not (over_quota and self._held_back(item[0], item[2]))
        ]
        if not partitions:
            await asyncio.sleep(RETRY_BACKOFF_S)
            return
        fetch = self._session.next(
            {
                key: (partition.log_end_offset, partition.log_start_offset, epoch)
                for key, epoch, partition in partitions
            }
        )
        try:
            frame = await connection.request_encoded(
                ApiKey.FETCH, FETCH_VERSION, encode_fetch_request(self._request(fetch))
            )
            response = decode_fetch_response(*frame)
        except BaseException:
            self._session.failed()
            raise
        self._session.answered(fetch, response.error_code, response.session_id)
        sent = {key: epoch for key, epoch, _ in partitions}
        waiting = False
        for topic in response.responses:
            for result in topic.partitions:
                key = PartitionKey(topic.topic, result.partition_index)
                follower = self._manager.partition_of(key)
                if follower is None or not self._still_follows(key, sent):
                    continue
                if self._held_back(key, follower):
                    self._settings.quota.record(len(result.records or b""))
                waiting |= self._apply(key, follower, result)
        if waiting:
            await asyncio.sleep(RETRY_BACKOFF_S)

    def _request(self, fetch: NextFetch) -> ReplicaFetchRequest:
        settings = self._settings
        by_topic: dict[str, list[FetchPosition]] = {}
        for key, (fetch_offset, log_start_offset, epoch) in fetch.sent.items():
            by_topic.setdefault(key.topic, []).append(
                FetchPosition(
                    key.partition,
                    epoch,
                    fetch_offset,
                    log_start_offset,
                    settings.partition_max_bytes,
                )
            )
        forgotten: dict[str, list[int]] = {}
        for key in fetch.forgotten:
            forgotten.setdefault(key.topic, []).append(key.partition)
        return ReplicaFetchRequest(
            settings.node_id,
            settings.max_wait_ms,
            1,
            settings.max_bytes,
            fetch.session_id,
            fetch.epoch,
            by_topic,
            forgotten,
        )

    def _apply(self, key: PartitionKey, partition: Partition, result: FetchedData) -> bool:
        """Apply one partition's fetch result; True if it must wait for metadata."""
        code = result.error_code
        if code == ErrorCode.none:
            try:
                partition.append_as_follower(result.records or b"", result.high_watermark)
            except KafkaError as error:
                if error.code != ErrorCode.kafka_storage_error:
                    raise
                # its log directory went offline (logged there): the replica stays behind
            return False
        if code == ErrorCode.offset_out_of_range:
            if partition.log_end_offset < result.log_start_offset:
                partition.restart_at(result.log_start_offset)
            else:
                self._to_truncate.add(key)
            return False
        if code in _WAIT_FOR_METADATA:
            return True
        log.warning("%s: fetch from broker %d failed: %s", key, self.leader, code.name)
        return True


def _refused(error: Exception) -> bool:
    """The leader refused this broker's login or TLS handshake, or this broker could not
    log in at all (its token unreadable, say); a connection cut short during TLS is not a
    refusal."""
    if isinstance(error, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
        return False
    return isinstance(error, (PeerAuthenticationFailed, SaslClientError, ssl.SSLError))
