"""AddPartitionsToTxn. v0-3 (the clients' versions): partitions join the producer's
transaction before it writes to them. WRITE on the transactional id and on each topic; a
partition that is denied or unknown fails the request, the others getting
OPERATION_NOT_ATTEMPTED, as Kafka answers. v4-5 (between brokers, CLUSTER_ACTION): several
transactions at once, each, with ``verify_only``, checked (KIP-890: a partition leader asks
whether a producer's first batch belongs to its transaction), or else added (transaction
version 2: the leader adds the partition of a producer's first batch)."""

from __future__ import annotations

import asyncio
from typing import Any

from odradek.broker.group.group_partition import OFFSETS_TOPIC
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.transactional import (
    check_transactional_id,
    fenced_as_the_version_knows,
)
from odradek.broker.transaction.transaction_config import TRANSACTION_STATE_TOPIC
from odradek.broker.transaction.verification import ADDING_TRANSACTION_VERSION

FENCED_FROM = 2
# Kafka's Topic.isInternal: a client's transaction never writes to these itself
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC})


BATCHED_FROM = 4


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    if request.header.api_version >= BATCHED_FROM:
        return await _batched(context, request)
    body = request.body
    requested = [
        (topic.name, index) for topic in body.v3_and_below_topics for index in topic.partitions
    ]
    try:
        check_transactional_id(context, request, body.v3_and_below_transactional_id)
        failed = _unusable(context, request, requested)
        if not failed:
            producer = (body.v3_and_below_producer_id, body.v3_and_below_producer_epoch)
            await context.transactions.add_partitions(
                body.v3_and_below_transactional_id, producer, requested, client_version=0
            )
    except KafkaError as error:
        code = fenced_as_the_version_knows(error, request.header.api_version, FENCED_FROM).code
        failed = dict.fromkeys(requested, code)
    else:
        if failed:
            failed = {key: failed.get(key, ErrorCode.operation_not_attempted) for key in requested}
    results: dict[str, list[dict[str, Any]]] = {}
    for topic, index in requested:
        code = failed.get((topic, index), ErrorCode.none) if failed else ErrorCode.none
        results.setdefault(topic, []).append(
            {"partition_index": index, "partition_error_code": code}
        )
    return {
        "throttle_time": 0,
        "results_by_topic_v3_and_below": [
            {"name": topic, "results_by_partition": partitions}
            for topic, partitions in results.items()
        ],
    }


def _unusable(
    context: BrokerContext, request: Request, requested: list[tuple[str, int]]
) -> dict[tuple[str, int], ErrorCode]:
    """The partitions the sender may not write, or that do not exist."""
    writable = context.authorization.allowed_names(
        request,
        AclOperation.WRITE,
        ResourceType.TOPIC,
        {topic for topic, _ in requested if topic not in INTERNAL_TOPICS},
    )
    topics = context.store.image.topics
    failed = {}
    for topic, index in requested:
        if topic not in writable:
            failed[(topic, index)] = ErrorCode.topic_authorization_failed
        elif topic not in topics or not 0 <= index < len(topics[topic].partitions):
            failed[(topic, index)] = ErrorCode.unknown_topic_or_partition
    return failed


async def _batched(context: BrokerContext, request: Request) -> dict[str, Any]:
    if not context.authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION):
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.cluster_authorization_failed,
            "results_by_transaction": [],
        }
    # each transaction's state is written and replicated on its own: they wait together
    transactions = request.body.transactions
    answers = await asyncio.gather(*(_one(context, t) for t in transactions))
    results = [
        {
            "transactional_id": transaction.transactional_id,
            "topic_results": _by_topic(codes),
        }
        for transaction, codes in zip(transactions, answers, strict=True)
    ]
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results_by_transaction": results}


async def _one(context: BrokerContext, transaction: Any) -> dict[tuple[str, int], ErrorCode]:
    """One transaction of a batched request: its partitions checked, or added."""
    requested = [(t.name, index) for t in transaction.topics for index in t.partitions]
    producer = (transaction.producer_id, transaction.producer_epoch)
    coordinator = context.transactions
    try:
        if transaction.verify_only:
            return coordinator.verify(transaction.transactional_id, producer, requested)
        await coordinator.add_partitions(
            transaction.transactional_id, producer, requested, ADDING_TRANSACTION_VERSION
        )
        return dict.fromkeys(requested, ErrorCode.none)
    except KafkaError as error:
        return dict.fromkeys(requested, error.code)


def _by_topic(codes: dict[tuple[str, int], ErrorCode]) -> list[dict[str, Any]]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, index), code in codes.items():
        by_topic.setdefault(topic, []).append(
            {"partition_index": index, "partition_error_code": code}
        )
    return [{"name": topic, "results_by_partition": items} for topic, items in by_topic.items()]
