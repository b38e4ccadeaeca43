"""What Kafka refuses in CreateAcls, DescribeAcls and DeleteAcls, with INVALID_REQUEST.

A Kafka broker checks a new binding in two places, and the order decides which message a
client sees: the request handler (``AclApis``) first refuses a CLUSTER resource not named
``kafka-cluster`` and an empty name, then the controller (``AclControlManager``) refuses
what no ACL can hold: a filter value (``ANY``, ``MATCH``) or ``UNKNOWN`` in any field, and
a principal without the colon of ``Type:name``. Kafka refuses ``UNKNOWN`` codes already
while parsing the request; here they are refused per binding like the rest.
"""

from __future__ import annotations

from typing import NoReturn

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.acl_filters import AclBindingFilter
from odradek.broker.security.acl_model import (
    CLUSTER_NAME,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)

_STORABLE_PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)
_STORABLE_PERMISSIONS = (AclPermissionType.ALLOW, AclPermissionType.DENY)


def validate_new_acl(binding: AclBinding) -> None:
    """Raise ``KafkaError(INVALID_REQUEST)`` for a binding Kafka would not create."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        _refuse(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}.")
    if not pattern.name:
        _refuse("Invalid empty resource name: an ACL names a resource, a prefix or *.")
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        _refuse(
            f"Invalid resourceType {pattern.resource_type.name}: an ACL is for one resource type."
        )
    if pattern.pattern_type not in _STORABLE_PATTERN_TYPES:
        _refuse(
            f"Invalid patternType {pattern.pattern_type.name}: "
            "an ACL's pattern type is LITERAL or PREFIXED."
        )
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        _refuse(f"Invalid operation {entry.operation.name}: an ACL grants or denies one operation.")
    if entry.permission not in _STORABLE_PERMISSIONS:
        _refuse(f"Invalid permissionType {entry.permission.name}: an ACL allows or denies.")
    if ":" not in entry.principal:
        _refuse(
            f"Could not parse principal from `{entry.principal}` (no colon is present "
            "separating the principal type from the principal name)."
        )


def validate_acl_filter(acl_filter: AclBindingFilter) -> None:
    """Raise ``KafkaError(INVALID_REQUEST)`` for a filter with an ``UNKNOWN`` field."""
    if acl_filter.pattern_filter.is_unknown:
        _refuse("Unknown patternFilter: its resource type or pattern type is UNKNOWN.")
    if acl_filter.entry_filter.is_unknown:
        _refuse("Unknown entryFilter: its operation or permission type is UNKNOWN.")


def _refuse(message: str) -> NoReturn:
    raise KafkaError(ErrorCode.invalid_request, message)
