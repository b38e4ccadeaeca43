"""DeleteAcls v0-3: remove the ACL bindings each filter selects and say which they were."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclBinding, AclOperation
from odradek.broker.security.acl_validation import validate_acl_filter
from odradek.broker.server.acl_requests import (
    check_acl_api,
    entry_fields,
    filter_of,
    matching,
    resource_fields,
)
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    filters = request.body.filters
    try:
        check_acl_api(context, request, AclOperation.ALTER)
    except KafkaError as error:
        return {"throttle_time": 0, "filter_results": [_failed(error) for _ in filters]}
    existing = context.store.image.acls
    results: list[dict[str, Any]] = []
    deleted: list[AclBinding] = []
    for item in filters:
        acl_filter = filter_of(item)
        try:
            validate_acl_filter(acl_filter)
        except KafkaError as error:
            results.append(_failed(error))
            continue
        matched = matching(existing, acl_filter)
        deleted += matched
        results.append(
            {
                "error_code": ErrorCode.none,
                "error_message": None,
                "matching_acls": [_matched(binding) for binding in matched],
            }
        )
    if deleted:
        try:
            await context.store.alter_acls((), deleted)
        except Exception as error:  # the store failed: nothing was deleted
            code, message = error_of(error)
            failed: dict[str, Any] = {"error_code": code, "error_message": message,
                                      "matching_acls": []}  # fmt: skip
            results = [failed for _ in filters]
    return {"throttle_time": 0, "filter_results": results}


def _failed(error: KafkaError) -> dict[str, Any]:
    return {"error_code": error.code, "error_message": error.message, "matching_acls": []}


def _matched(binding: AclBinding) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.none,
        "error_message": None,
        **resource_fields(binding.pattern),
        **entry_fields(binding.entry),
    }
