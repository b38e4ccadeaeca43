"""DescribeCluster v0-2: brokers, controller and cluster id (the AdminClient's view).

A broker serves the broker endpoints only: a request for the controllers' gets
MISMATCHED_ENDPOINT_TYPE, an unknown type UNSUPPORTED_ENDPOINT_TYPE, as from Kafka's
brokers. Fenced brokers are listed only when the request includes them (v2).
"""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.protocol.metadata_response import AUTHORIZED_OPERATIONS_OMITTED
from odradek.broker.security.acl_model import CLUSTER_NAME, AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext

BROKER_ENDPOINTS = 1
CONTROLLER_ENDPOINTS = 2


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    image = context.store.image
    body = request.body
    endpoint_type = getattr(body, "endpoint_type", BROKER_ENDPOINTS)
    response: dict[str, Any] = {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINTS,
        "cluster_id": image.cluster_id,
        "controller_id": image.controller_id,
        "brokers": [],
        "cluster_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
    if endpoint_type == CONTROLLER_ENDPOINTS:
        return {
            **response,
            "error_code": ErrorCode.mismatched_endpoint_type,
            "error_message": "this is a broker endpoint; Odradek's controller is a broker "
            "role and has no endpoint of its own",
        }
    if endpoint_type != BROKER_ENDPOINTS:
        return {
            **response,
            "error_code": ErrorCode.unsupported_endpoint_type,
            "error_message": f"unknown endpoint type {endpoint_type}",
        }
    fenced = image.fenced_brokers()
    with_fenced = getattr(body, "include_fenced_brokers", False)
    response["brokers"] = [
        {
            "broker_id": b.node_id,
            "host": ep.host,
            "port": ep.port,
            "rack": b.rack,
            "is_fenced": b.node_id in fenced,
        }
        for b in image.brokers.values()
        if (with_fenced or b.node_id not in fenced)
        and (ep := b.endpoint(request.listener_name)) is not None
    ]
    if getattr(body, "include_cluster_authorized_operations", False):
        # Kafka: no operations without DESCRIBE on the cluster, the answer itself is no secret
        authorization = context.authorization
        response["cluster_authorized_operations"] = (
            authorization.authorized_operations(request, ResourceType.CLUSTER, CLUSTER_NAME)
            if authorization.authorize_cluster(request, AclOperation.DESCRIBE)
            else 0
        )
    return response
