"""DescribeCluster: brokers, controller and cluster id (the AdminClient's view)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.types import AUTHORIZED_OPERATIONS_OMITTED

BROKER_ENDPOINTS = 1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    image = context.store.image
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINTS,
        "cluster_id": image.cluster_id,
        "controller_id": image.controller_id,
        "brokers": [
            {"broker_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack}
            for b in image.brokers.values()
        ],
        "cluster_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
