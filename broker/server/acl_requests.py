"""CreateAcls, DescribeAcls and DeleteAcls fields to and from the ACL model.

Version 0 of each has no pattern type: its bindings and filters are LITERAL, as Kafka
reads them. The three APIs need ALTER (create, delete) or DESCRIBE (describe) on the
cluster first, then an authorizer: without one Kafka answers SECURITY_DISABLED.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_filters import (
    AccessControlEntryFilter,
    AclBindingFilter,
    ResourcePatternFilter,
)
from odradek.broker.security.acl_model import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from odradek.broker.server.context import BrokerContext

NO_AUTHORIZER = "No Authorizer is configured."


def check_acl_api(context: BrokerContext, request: Request, operation: AclOperation) -> None:
    """Raise what Kafka answers before it looks at the request: CLUSTER_AUTHORIZATION_FAILED
    without ``operation`` on the cluster, SECURITY_DISABLED without an authorizer."""
    authorization = context.authorization
    if not authorization.authorize_cluster(request, operation):
        raise KafkaError(ErrorCode.cluster_authorization_failed, "Request is not authorized.")
    if not authorization.enabled:
        raise KafkaError(ErrorCode.security_disabled, NO_AUTHORIZER)


def _pattern_type(item: Any, field_name: str) -> PatternType:
    return PatternType.from_code(getattr(item, field_name, PatternType.LITERAL))


def binding_of(creation: Any) -> AclBinding:
    """A CreateAcls creation as a binding (not yet validated)."""
    return AclBinding(
        ResourcePattern(
            ResourceType.from_code(creation.resource_type),
            creation.resource_name,
            _pattern_type(creation, "resource_pattern_type"),
        ),
        AccessControlEntry(
            creation.principal,
            creation.host,
            AclOperation.from_code(creation.operation),
            AclPermissionType.from_code(creation.permission_type),
        ),
    )


def filter_of(item: Any) -> AclBindingFilter:
    """A DescribeAcls request or a DeleteAcls filter as a binding filter."""
    return AclBindingFilter(
        ResourcePatternFilter(
            ResourceType.from_code(item.resource_type_filter),
            item.resource_name_filter,
            _pattern_type(item, "pattern_type_filter"),
        ),
        AccessControlEntryFilter(
            item.principal_filter,
            item.host_filter,
            AclOperation.from_code(item.operation),
            AclPermissionType.from_code(item.permission_type),
        ),
    )


def matching(bindings: Iterable[AclBinding], acl_filter: AclBindingFilter) -> list[AclBinding]:
    """The bindings a filter selects, in a stable order (by resource, then entry)."""
    return sorted((b for b in bindings if acl_filter.matches(b)), key=_order)


def _order(binding: AclBinding) -> tuple[int, str, int, str, str, int, int]:
    pattern, entry = binding.pattern, binding.entry
    return (
        pattern.resource_type,
        pattern.name,
        pattern.pattern_type,
        entry.principal,
        entry.host,
        entry.operation,
        entry.permission,
    )


def resource_fields(pattern: ResourcePattern) -> dict[str, Any]:
    return {
        "resource_type": pattern.resource_type.value,
        "resource_name": pattern.name,
        "pattern_type": pattern.pattern_type.value,
    }


def entry_fields(entry: AccessControlEntry) -> dict[str, Any]:
    return {
        "principal": entry.principal,
        "host": entry.host,
        "operation": entry.operation.value,
        "permission_type": entry.permission.value,
    }
