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
now NOT_ENOUGH_REPLICAS (which every client retries).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence

from odradek.broker.cluster.peer_pool import PeerPool
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


class TransactionVerifier:
    def __init__(self, node_id: int, coordinator: TransactionCoordinator, peers: PeerPool) -> None:
        self._node_id = node_id
        self._coordinator = coordinator
        self._peers = peers

    async def verify(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Sequence[TopicPartition],
        check: TransactionCheck,
    ) -> dict[TopicPartition, ErrorCode]:
        """Each partition's code for the producer's answer: NONE when the batch may open a
        transaction there."""
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
        return {key: _for_producer(code, check) for key, code in found.items()}

    async def _ask(
        self,
        broker: int,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Sequence[TopicPartition],
        check: TransactionCheck,
    ) -> dict[TopicPartition, ErrorCode]:
        topics: dict[str, list[int]] = {}
        for topic, index in partitions:
            topics.setdefault(topic, []).append(index)
        body = {
            "transactions": [
                {
                    "transactional_id": transactional_id,
                    "producer_id": producer[0],
                    "producer_epoch": producer[1],
                    "verify_only": check is not TransactionCheck.ADD,
                    "topics": [{"name": n, "partitions": i} for n, i in topics.items()],
                }
            ]
        }
        answer = await self._peers.request(
            broker, ApiKey.ADD_PARTITIONS_TO_TXN, INTER_BROKER_VERSION, body
        )
        if answer.error_code is not ErrorCode.none:
            raise KafkaError(
                answer.error_code, f"broker {broker} answered {answer.error_code.name}"
            )
        return {
            (topic.name, result.partition_index): result.partition_error_code
            for transaction in answer.results_by_transaction
            for topic in transaction.topic_results
            for result in topic.results_by_partition
        }


def _for_producer(code: ErrorCode, check: TransactionCheck) -> ErrorCode:
    if code is ErrorCode.transaction_abortable and check is TransactionCheck.VERIFY:
        return ErrorCode.invalid_txn_state
    if code is ErrorCode.cluster_authorization_failed:
        return ErrorCode.invalid_txn_state  # the client is not told of the brokers' ACLs
    return _FOR_PRODUCER.get(code, code)
