"""KIP-890's check on the partition leader's side: before a producer's first transactional
batch in a partition opens a transaction there, the leader asks the transaction coordinator
(itself, or another broker through AddPartitionsToTxn v5) whether the partition is in that
producer's ongoing transaction (``verify_only``, transaction version 1) or, for a request
of transaction version 2 (Produce v12+, TxnOffsetCommit v5+), adds it. A late or stray
batch (one sent after its transaction ended) is refused instead of opening a transaction no
marker will close, which would hold the last stable offset back for good.

The coordinator's answers reach the producer as Kafka translates them: an older epoch
INVALID_PRODUCER_EPOCH, a partition not in the transaction TRANSACTION_ABORTABLE (for
request versions that know it, else INVALID_TXN_STATE), a coordinator that cannot answer
now NOT_ENOUGH_REPLICAS (which every client retries). A partition that the coordinator
cannot add yet because the producer's previous transaction is still completing
(CONCURRENT_TRANSACTIONS: its markers are being written) is asked again on the broker, as
Kafka's ReplicaManager does for a Produce (``add.partitions.to.txn.retry.backoff.ms``, for
at most ``add.partitions.to.txn.retry.backoff.max.ms``; here for TxnOffsetCommit's offsets
partition too): sent back to the client, that retry costs some clients (franz-go) a
metadata refresh of up to five seconds.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence
from dataclasses import dataclass

from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.transaction.coordinator import TransactionCoordinator

INTER_BROKER_VERSION = 5
ADDING_TRANSACTION_VERSION = 2
TopicPartition = tuple[str, int]
_FOR_PRODUCER = {
    ErrorCode.producer_fenced: ErrorCode.invalid_producer_epoch,
    ErrorCode.not_coordinator: ErrorCode.not_enough_replicas,
    ErrorCode.coordinator_not_available: ErrorCode.not_enough_replicas,
    ErrorCode.coordinator_load_in_progress: ErrorCode.not_enough_replicas,
    ErrorCode.concurrent_transactions: ErrorCode.not_enough_replicas,
}


class TransactionCheck(enum.Enum):
    """What a request's version lets the leader do, as Kafka's TransactionSupportedOperation."""

    VERIFY = "verify"  # an older client: TRANSACTION_ABORTABLE reaches it as INVALID_TXN_STATE
    VERIFY_ABORTABLE = "verify, abortable"  # the client knows TRANSACTION_ABORTABLE
    ADD = "add"  # transaction version 2: the leader adds the partition

    @classmethod
    def for_version(cls, version: int, abortable_from: int, add_from: int) -> TransactionCheck:
        if version >= add_from:
            return cls.ADD
        return cls.VERIFY_ABORTABLE if version >= abortable_from else cls.VERIFY


@dataclass(frozen=True)
class AddRetry:
    """How an add refused with CONCURRENT_TRANSACTIONS is asked again."""

    backoff_s: float
    max_s: float

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> AddRetry:
        return cls(
            config.get_int("add.partitions.to.txn.retry.backoff.ms") / 1000,
            config.get_int("add.partitions.to.txn.retry.backoff.max.ms") / 1000,
        )


class TransactionVerifier:
    def __init__(
        self,
        node_id: int,
        coordinator: TransactionCoordinator,
        peers: PeerPool,
        add_retry: AddRetry,
    ) -> None:
        self._node_id = node_id
        self._coordinator = coordinator
        self._peers = peers
        self._add_retry = add_retry
        self._waiting: dict[int, list[PendingCheck]] = {}  # by coordinator broker, not yet sent
        self._senders: dict[int, asyncio.Task[None]] = {}

    async def verify(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Sequence[TopicPartition],
        check: TransactionCheck,
    ) -> dict[TopicPartition, ErrorCode]:
        """Each partition's code for the producer's answer: NONE when the batch may open a
        transaction there. Partitions the coordinator could not add because the producer's
        previous transaction is still completing are asked again (``AddRetry``)."""
        found = await self._check(transactional_id, producer, partitions, check)
        if check is TransactionCheck.ADD:
            loop = asyncio.get_running_loop()
            retry = self._add_retry
            deadline = loop.time() + retry.max_s
            completing = ErrorCode.concurrent_transactions
            while (
                busy := [key for key, code in found.items() if code is completing]
            ) and loop.time() + retry.backoff_s <= deadline:
                await asyncio.sleep(retry.backoff_s)
                found |= await self._check(transactional_id, producer, busy, check)
        return {key: _for_producer(code, check) for key, code in found.items()}

    async def _check(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Sequence[TopicPartition],
        check: TransactionCheck,
    ) -> dict[TopicPartition, ErrorCode]:
        """The coordinator's code for each partition."""
        try:
            coordinator = await self._coordinator.find_coordinator(transactional_id)
            if coordinator.node_id != self._node_id:
                found = await self._ask(
                    coordinator.node_id, transactional_id, producer, partitions, check
                )
            elif check is TransactionCheck.ADD:
                await self._coordinator.add_partitions(
                    transactional_id, producer, partitions, ADDING_TRANSACTION_VERSION
                )
                found = dict.fromkeys(partitions, ErrorCode.none)
            else:
                found = self._coordinator.verify(transactional_id, producer, partitions)
        except KafkaError as error:
            found = dict.fromkeys(partitions, error.code)
        except (OSError, TimeoutError, asyncio.IncompleteReadError):
            found = dict.fromkeys(partitions, ErrorCode.not_enough_replicas)
        return found

    async def _ask(
        self,
        broker: int,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Sequence[TopicPartition],
        check: TransactionCheck,
    ) -> dict[TopicPartition, ErrorCode]:
        """Ask the coordinator on ``broker``, in the next batch it is sent: one request is in
        flight to a broker at a time, and everything asked meanwhile goes in the next one
        (as Kafka's AddPartitionsToTxnManager), so producers do not queue one by one."""
        asked = PendingCheck(
            transactional_id,
            producer,
            check is not TransactionCheck.ADD,
            list(partitions),
            asyncio.get_running_loop().create_future(),
        )
        self._waiting.setdefault(broker, []).append(asked)
        sender = self._senders.get(broker)
        if sender is None or sender.done():
            self._senders[broker] = asyncio.get_running_loop().create_task(self._send(broker))
        return await asked.answer

    async def _send(self, broker: int) -> None:
        while self._waiting.get(broker):
            batch, later = one_per_transaction(self._waiting.pop(broker))
            if later:
                self._waiting[broker] = later
            try:
                answered = await self._request(broker, batch)
            except (KafkaError, OSError, TimeoutError, asyncio.IncompleteReadError) as error:
                for asked in batch:
                    if not asked.answer.done():
                        asked.answer.set_exception(error)
                continue
            for asked in batch:
                if not asked.answer.done():
                    codes = answered.get(asked.transactional_id, {})
                    asked.answer.set_result(
                        {
                            key: codes.get(key, ErrorCode.unknown_server_error)
                            for key in asked.partitions
                        }
                    )

    async def _request(
        self, broker: int, batch: Sequence[PendingCheck]
    ) -> dict[str, dict[TopicPartition, ErrorCode]]:
        entries: dict[str, tuple[PendingCheck, dict[str, set[int]]]] = {}
        for asked in batch:
            _, topics = entries.setdefault(asked.transactional_id, (asked, {}))
            for topic, index in asked.partitions:
                topics.setdefault(topic, set()).add(index)
        transactions = [
            {
                "transactional_id": transactional_id,
                "producer_id": asked.producer[0],
                "producer_epoch": asked.producer[1],
                "verify_only": asked.verify_only,
                "topics": [{"name": n, "partitions": sorted(i)} for n, i in topics.items()],
            }
            for transactional_id, (asked, topics) in entries.items()
        ]
        answer = await self._peers.request(
            broker,
            ApiKey.ADD_PARTITIONS_TO_TXN,
            INTER_BROKER_VERSION,
            {"transactions": transactions},
        )
        if answer.error_code is not ErrorCode.none:
            raise KafkaError(
                answer.error_code, f"broker {broker} answered {answer.error_code.name}"
            )
        return {
            transaction.transactional_id: {
                (topic.name, result.partition_index): result.partition_error_code
                for topic in transaction.topic_results
                for result in topic.results_by_partition
            }
            for transaction in answer.results_by_transaction
        }


@dataclass
class PendingCheck:
    """A partition leader's question to a transaction coordinator, waiting for its batch."""

    transactional_id: str
    producer: tuple[int, int]
    verify_only: bool
    partitions: list[TopicPartition]
    answer: asyncio.Future[dict[TopicPartition, ErrorCode]]


def one_per_transaction(
    waiting: list[PendingCheck],
) -> tuple[list[PendingCheck], list[PendingCheck]]:
    """A batch names each transactional id once: questions of the same producer with the
    same check share its entry; any other question about an id in the batch waits."""
    first: dict[str, PendingCheck] = {}
    batch, later = [], []
    for asked in waiting:
        known = first.setdefault(asked.transactional_id, asked)
        if (known.producer, known.verify_only) == (asked.producer, asked.verify_only):
            batch.append(asked)
        else:
            later.append(asked)
    return batch, later


def _for_producer(code: ErrorCode, check: TransactionCheck) -> ErrorCode:
    if code is ErrorCode.transaction_abortable and check is TransactionCheck.VERIFY:
        return ErrorCode.invalid_txn_state
    if code is ErrorCode.cluster_authorization_failed:
        return ErrorCode.invalid_txn_state  # the client is not told of the brokers' ACLs
    return _FOR_PRODUCER.get(code, code)
