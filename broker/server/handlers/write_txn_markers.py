"""WriteTxnMarkers v1: a transaction coordinator's COMMIT or ABORT markers, one per producer
and partition, appended by each partition's leader and answered once replicated to the
in-sync replicas (as acks=all, within ``request.timeout.ms``). CLUSTER_ACTION on the
cluster, as between Kafka brokers, or ALTER on it, as for an administrator aborting a hanging
transaction (Kafka 3.8, KAFKA-16513)."""

from __future__ import annotations

import asyncio
from typing import Any

from odradek.broker.group.group_partition import OFFSETS_TOPIC
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.protocol.transaction_markers import MarkerType, TransactionMarker
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    authorization = context.authorization
    allowed = authorization.authorize_cluster(
        request, AclOperation.ALTER, log_denied=False
    ) or authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION)
    timeout_s = context.config.get_int("request.timeout.ms") / 1000
    results = []
    for written in request.body.markers:
        marker = TransactionMarker(
            written.producer_id,
            written.producer_epoch,
            MarkerType.COMMIT if written.transaction_result else MarkerType.ABORT,
            written.coordinator_epoch,
        )
        topics = []
        for topic in written.topics:
            partitions = [
                _write(context, topic.name, index, marker, allowed, timeout_s)
                for index in topic.partition_indexes
            ]
            topics.append({"name": topic.name, "partitions": await asyncio.gather(*partitions)})
        results.append({"producer_id": written.producer_id, "topics": topics})
    return {"markers": results}


async def _write(
    context: BrokerContext,
    topic: str,
    index: int,
    marker: TransactionMarker,
    allowed: bool,
    timeout_s: float,
) -> dict[str, Any]:
    async def answer() -> dict[str, Any]:
        if not allowed:
            raise KafkaError(ErrorCode.cluster_authorization_failed)
        min_insync = context.min_insync(topic)
        partition = context.replicas.get(topic, index)
        info = partition.append_marker(marker, min_insync)
        await partition.wait_for_high_watermark(info.last_offset + 1, timeout_s)
        partition.check_enough_replicas_after_append(min_insync)
        if topic == OFFSETS_TOPIC:
            context.groups.complete_transaction(index, marker.producer_id, marker.commits)
        return {}

    return {"partition_index": index, **await awaited_answer_or_error(answer, {})}
