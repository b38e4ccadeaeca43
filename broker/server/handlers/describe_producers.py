"""DescribeProducers v0: the producers a partition leader keeps state for, as
`kafka-transactions describe-producers` shows them: epoch, last sequence and timestamp, the
epoch of the coordinator that wrote its last marker and where its open transaction starts
(-1 for none)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    topics = [
        {
            "name": topic.name,
            "partitions": [
                _partition(context, request, topic.name, index) for index in topic.partition_indexes
            ],
        }
        for topic in request.body.topics
    ]
    return {"throttle_time": 0, "topics": topics}


def _partition(context: BrokerContext, request: Request, topic: str, index: int) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        context.authorization.check(request, AclOperation.READ, ResourceType.TOPIC, topic)
        producers = context.replicas.get(topic, index).active_producers()
        return {
            "active_producers": [
                {
                    "producer_id": producer_id,
                    "producer_epoch": entry.epoch,
                    "last_sequence": entry.last_seq,
                    "last_timestamp": entry.last_timestamp,
                    "coordinator_epoch": entry.coordinator_epoch,
                    "current_txn_start_offset": entry.txn_first_offset,
                }
                for producer_id, entry in producers.items()
            ]
        }

    found = answer_or_error(answer, {"active_producers": []}, "error_message")
    return {"partition_index": index, **found}
