"""The requests of ``odradek transactions``, on kafka-python's admin client (librdkafka has
no transaction admin API): ListTransactions on every broker, FindCoordinator (key type 1)
and DescribeTransactions, DescribeProducers and WriteTxnMarkers (ABORT) to a partition's
leader, as Kafka's admin client sends them for ``kafka-transactions``; ``find-hanging``
chains them as Kafka's tool does.

The tables are built by pure functions of what the brokers answered, with Kafka's column
names."""

from __future__ import annotations

import argparse
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka.admin._transactions import (  # type: ignore[import-untyped]
    AbortTransactionSpec,
    ProducerState,
    TransactionDescription,
    TransactionListing,
)
from kafka.errors import (  # type: ignore[import-untyped]
    BrokerResponseError,
    TransactionalIdNotFoundError,
)
from kafka.structs import TopicPartition  # type: ignore[import-untyped]

from odradek.cli.client_options import CliError
from odradek.cli.kafka_python_admin import admin_client, refused

LIST_COLUMNS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_COLUMNS = (
    "CoordinatorId",
    "TransactionalId",
    "ProducerId",
    "ProducerEpoch",
    "TransactionState",
    "TransactionTimeoutMs",
    "CurrentTransactionStartTimeMs",
    "TransactionDurationMs",
    "TopicPartitions",
)
PRODUCER_COLUMNS = (
    "ProducerId",
    "ProducerEpoch",
    "LatestCoordinatorEpoch",
    "LastSequence",
    "LastTimestamp",
    "CurrentTransactionStartOffset",
)
HANGING_COLUMNS = (
    "Topic",
    "Partition",
    "ProducerId",
    "ProducerEpoch",
    "CoordinatorEpoch",
    "StartOffset",
    "LastTimestamp",
    "Duration(min)",
)
NO_OFFSET = -1  # DescribeProducers: the producer has no open transaction


@dataclass(frozen=True)
class Abort:
    """The transaction to abort on one partition, as WriteTxnMarkers names it."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __str__(self) -> str:
        return (
            f"producer {self.producer_id} (epoch {self.producer_epoch}, coordinator epoch "
            f"{self.coordinator_epoch}) on {self.topic}-{self.partition}"
        )


# --- what the commands ask ---------------------------------------------------------------------


def list_transactions(args: argparse.Namespace) -> list[tuple[str, int, int, str]]:
    """ListTransactions on every broker: each coordinator's transactional ids."""
    with admin_client(args) as admin:
        try:
            by_broker = admin.list_transactions()
        except BrokerResponseError as error:
            raise refused(error, "cannot list transactions") from None
    return listing_rows(by_broker)


def describe_transaction(
    args: argparse.Namespace, transactional_id: str, now_ms: int
) -> tuple[object, ...]:
    """FindCoordinator for the id, then DescribeTransactions on its coordinator."""
    with admin_client(args) as admin:
        try:
            description = admin.describe_transactions([transactional_id])[transactional_id]
        except BrokerResponseError as error:
            doing = f"cannot describe transactional id {transactional_id}"
            raise refused(error, doing) from None
    return description_row(transactional_id, description, now_ms)


def describe_producers(
    args: argparse.Namespace, topic: str, partition: int, broker_id: int | None
) -> list[tuple[object, ...]]:
    """DescribeProducers on the partition's leader (or on replica ``broker_id``)."""
    return producer_rows(_producers(args, topic, partition, broker_id))


def open_transaction_at(args: argparse.Namespace, topic: str, partition: int, start: int) -> Abort:
    """The producer whose open transaction on the partition starts at offset ``start``, from
    the leader's DescribeProducers."""
    return abort_at(topic, partition, _producers(args, topic, partition, None), start)


def _producers(
    args: argparse.Namespace, topic: str, partition: int, broker_id: int | None
) -> list[ProducerState]:
    where = TopicPartition(topic, partition)
    with admin_client(args) as admin:
        try:
            found = admin.describe_producers([where], broker_id=broker_id)[where]
        except BrokerResponseError as error:
            raise refused(error, f"cannot describe the producers of {topic}-{partition}") from None
    producers: list[ProducerState] = found.active_producers
    return producers


def abort(args: argparse.Namespace, transaction: Abort) -> None:
    """WriteTxnMarkers with an ABORT marker to the partition's leader."""
    spec = AbortTransactionSpec(
        TopicPartition(transaction.topic, transaction.partition),
        transaction.producer_id,
        transaction.producer_epoch,
        transaction.coordinator_epoch,
    )
    with admin_client(args) as admin:
        try:
            admin.abort_transaction(spec)
        except BrokerResponseError as error:
            raise refused(error, f"cannot abort the transaction of {transaction}") from None


def find_hanging(
    args: argparse.Namespace,
    topic: str | None,
    partition: int | None,
    broker_id: int | None,
    max_timeout_ms: int,
    now_ms: int,
) -> list[tuple[object, ...]]:
    """Kafka's search: the open transactions of the partitions (of the topic, or with a
    replica on the broker) older than ``max_timeout_ms``, those whose producer's
    transactional id is unknown, or whose coordinator does not count the partition in its
    transaction: no coordinator will ever end them."""
    with admin_client(args) as admin:
        try:
            partitions = _partitions_to_search(admin, topic, partition, broker_id)
            states = admin.describe_producers(partitions, broker_id=broker_id) if partitions else {}
            found = open_for_longer_than(states, max_timeout_ms, now_ms)
            producer_ids = sorted({transaction.producer.producer_id for transaction in found})
            listed = admin.list_transactions(producer_id_filters=producer_ids) if found else {}
            ids = {t.producer_id: t.transactional_id for ts in listed.values() for t in ts}
            held = {tid: _partitions_held(admin, tid) for tid in set(ids.values())}
        except BrokerResponseError as error:
            raise refused(error, "cannot search for hanging transactions") from None
    return hanging_rows(hanging(found, ids, held), now_ms)


def _partitions_to_search(
    admin: Any, topic: str | None, partition: int | None, broker_id: int | None
) -> list[TopicPartition]:
    if topic is not None and partition is not None:
        return [TopicPartition(topic, partition)]
    found = []
    for described in admin.describe_topics([topic] if topic is not None else None):
        if described["error_code"]:
            raise CliError(f"no such topic: {described['name']}")
        for info in described["partitions"]:
            if broker_id is None or broker_id in info["replica_nodes"]:
                found.append(TopicPartition(described["name"], info["partition_index"]))
    return found


def _partitions_held(admin: Any, transactional_id: str) -> set[tuple[str, int]] | None:
    """The partitions the id's coordinator counts in its transaction; None: an unknown id."""
    try:
        description = admin.describe_transactions([transactional_id])[transactional_id]
    except TransactionalIdNotFoundError:
        return None
    return {(tp.topic, tp.partition) for tp in description.topic_partitions}


# --- pure: answers to rows and choices ---------------------------------------------------------


def listing_rows(
    by_broker: Mapping[int, Iterable[TransactionListing]],
) -> list[tuple[str, int, int, str]]:
    """(transactional id, coordinator, producer id, state), sorted by id."""
    return sorted(
        (listing.transactional_id, broker, listing.producer_id, _state(listing.state))
        for broker, listings in by_broker.items()
        for listing in listings
    )


def description_row(
    transactional_id: str, description: TransactionDescription, now_ms: int
) -> tuple[object, ...]:
    """Kafka's describe row: the start time and duration are None with no transaction."""
    start = description.transaction_start_time_ms
    partitions = sorted((tp.topic, tp.partition) for tp in description.topic_partitions)
    return (
        description.coordinator_id,
        transactional_id,
        description.producer_id,
        description.producer_epoch,
        _state(description.state),
        description.transaction_timeout_ms,
        start if start >= 0 else "None",
        now_ms - start if start >= 0 else "None",
        ",".join(f"{topic}-{partition}" for topic, partition in partitions),
    )


def producer_rows(producers: Iterable[ProducerState]) -> list[tuple[object, ...]]:
    """Kafka's describe-producers rows, by producer id; None where no transaction is open."""
    return [
        (
            producer.producer_id,
            producer.producer_epoch,
            producer.coordinator_epoch,
            producer.last_sequence,
            producer.last_timestamp,
            start if (start := producer.current_transaction_start_offset) != NO_OFFSET else "None",
        )
        for producer in sorted(producers, key=lambda producer: producer.producer_id)
    ]


@dataclass(frozen=True)
class OpenTransaction:
    topic: str
    partition: int
    producer: ProducerState


def open_for_longer_than(
    states: Mapping[TopicPartition, Any], max_timeout_ms: int, now_ms: int
) -> list[OpenTransaction]:
    """The producers with an open transaction whose last write is ``max_timeout_ms`` old."""
    return [
        OpenTransaction(tp.topic, tp.partition, producer)
        for tp, state in sorted(states.items())
        for producer in state.active_producers
        if producer.current_transaction_start_offset != NO_OFFSET
        and now_ms - producer.last_timestamp >= max_timeout_ms
    ]


def hanging(
    found: Collection[OpenTransaction],
    transactional_ids: Mapping[int, str],
    held: Mapping[str, set[tuple[str, int]] | None],
) -> list[OpenTransaction]:
    """Those no coordinator will end: of no known transactional id, or of one whose
    transaction (ongoing, or completing and still writing markers) does not hold the
    partition."""
    stuck = []
    for transaction in found:
        transactional_id = transactional_ids.get(transaction.producer.producer_id)
        partitions = held.get(transactional_id) if transactional_id is not None else None
        if partitions is None or (transaction.topic, transaction.partition) not in partitions:
            stuck.append(transaction)
    return stuck


def hanging_rows(found: Iterable[OpenTransaction], now_ms: int) -> list[tuple[object, ...]]:
    """Kafka's find-hanging rows: the duration in whole minutes since the last write."""
    return [
        (
            transaction.topic,
            transaction.partition,
            transaction.producer.producer_id,
            transaction.producer.producer_epoch,
            transaction.producer.coordinator_epoch,
            transaction.producer.current_transaction_start_offset,
            transaction.producer.last_timestamp,
            (now_ms - transaction.producer.last_timestamp) // 60_000,
        )
        for transaction in found
    ]


def abort_at(topic: str, partition: int, producers: Sequence[ProducerState], start: int) -> Abort:
    """The open transaction starting at ``start`` among a partition's producers. A producer
    that never saw a marker has coordinator epoch -1: 0 is sent instead, as Kafka's tool
    does, which no coordinator epoch is below."""
    for producer in producers:
        if producer.current_transaction_start_offset == start != NO_OFFSET:
            return Abort(
                topic,
                partition,
                producer.producer_id,
                producer.producer_epoch,
                max(producer.coordinator_epoch, 0),
            )
    raise CliError(f"no open transaction starts at offset {start} of {topic}-{partition}")


def _state(state: Any) -> str:
    return str(getattr(state, "value", state))
