"""CreateAcls v0-3: store ACL bindings in the cluster metadata, where every broker's
authorizer finds them. Each creation is judged alone, as Kafka does (``AclApis`` then
``AclControlManager``): a refused one gets INVALID_REQUEST with Kafka's message, the others
are created."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclBinding, AclOperation
from odradek.broker.security.acl_validation import validate_new_acl
from odradek.broker.server.acl_requests import binding_of, check_acl_api
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    creations = request.body.creations
    try:
        check_acl_api(context, request, AclOperation.ALTER)
    except KafkaError as error:
        failed = {"error_code": error.code, "error_message": error.message}
        return {"throttle_time": 0, "results": [failed for _ in creations]}
    results: list[dict[str, Any]] = []
    valid: list[AclBinding] = []
    for creation in creations:
        binding = binding_of(creation)
        try:
            validate_new_acl(binding)
        except KafkaError as error:
            results.append({"error_code": error.code, "error_message": error.message})
            continue
        valid.append(binding)
        results.append({"error_code": ErrorCode.none, "error_message": None})
    if valid:
        try:
            await context.store.alter_acls(valid, ())
        except Exception as error:  # the store failed: every creation it held failed
            code, message = error_of(error)
            results = [
                {"error_code": code, "error_message": message}
                if result["error_code"] == ErrorCode.none
                else result
                for result in results
            ]
    return {"throttle_time": 0, "results": results}
