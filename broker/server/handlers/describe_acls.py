"""DescribeAcls v0-3: the ACL bindings a filter selects, grouped by resource pattern."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.security.acl_validation import validate_acl_filter
from odradek.broker.server.acl_requests import (
    check_acl_api,
    entry_fields,
    filter_of,
    matching,
    resource_fields,
)
from odradek.broker.server.context import BrokerContext


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    try:
        check_acl_api(context, request, AclOperation.DESCRIBE)
        acl_filter = filter_of(request.body)
        validate_acl_filter(acl_filter)
    except KafkaError as error:
        return {
            "throttle_time": 0,
            "error_code": error.code,
            "error_message": error.message,
            "resources": [],
        }
    bindings = matching(context.store.image.acls, acl_filter)
    resources = [
        {**resource_fields(pattern), "acls": [entry_fields(b.entry) for b in group]}
        for pattern, group in groupby(bindings, key=lambda binding: binding.pattern)
    ]
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "resources": resources,
    }
