"""CreateAcls, DescribeAcls and DeleteAcls refuse what Kafka refuses, with INVALID_REQUEST."""

from __future__ import annotations

import pytest
from acl_testing import CLUSTER, PREFIXED, binding

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.acl_filters import (
    ANY_ENTRY,
    ANY_RESOURCE,
    AccessControlEntryFilter,
    AclBindingFilter,
    ResourcePatternFilter,
)
from odradek.broker.security.acl_model import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from odradek.broker.security.acl_validation import validate_acl_filter, validate_new_acl


@pytest.mark.parametrize(
    "acl",
    [
        binding(),
        binding("orders-", pattern_type=PREFIXED),
        binding("*"),
        binding("*", pattern_type=PREFIXED),  # Kafka takes it: a prefix that is a star
        binding("kafka-cluster", resource_type=CLUSTER, operation=AclOperation.IDEMPOTENT_WRITE),
        binding(principal="User:*", host="10.0.0.1", permission=AclPermissionType.DENY),
        binding(principal="User:", operation=AclOperation.TWO_PHASE_COMMIT),
        binding("a-b", resource_type=ResourceType.DELEGATION_TOKEN, principal="Group:ops"),
    ],
)
def test_kafka_creates_these_bindings(acl: AclBinding) -> None:
    validate_new_acl(acl)


@pytest.mark.parametrize(
    ("acl", "message"),
    [
        (binding("other", resource_type=CLUSTER), "only valid name for the CLUSTER resource"),
        (binding("kafka", resource_type=CLUSTER, pattern_type=PREFIXED), "CLUSTER resource"),
        (binding(""), "Invalid empty resource name"),
        (binding(resource_type=ResourceType.ANY), "Invalid resourceType ANY"),
        (binding(resource_type=ResourceType.UNKNOWN), "Invalid resourceType UNKNOWN"),
        (binding(pattern_type=PatternType.MATCH), "Invalid patternType MATCH"),
        (binding(pattern_type=PatternType.ANY), "Invalid patternType ANY"),
        (binding(pattern_type=PatternType.UNKNOWN), "Invalid patternType UNKNOWN"),
        (binding(operation=AclOperation.ANY), "Invalid operation ANY"),
        (binding(operation=AclOperation.UNKNOWN), "Invalid operation UNKNOWN"),
        (binding(permission=AclPermissionType.ANY), "Invalid permissionType ANY"),
        (binding(permission=AclPermissionType.UNKNOWN), "Invalid permissionType UNKNOWN"),
        (binding(principal="alice"), "Could not parse principal from `alice`"),
        (binding(principal=""), "Could not parse principal"),
    ],
)
def test_kafka_refuses_these_bindings_with_invalid_request(acl: AclBinding, message: str) -> None:
    with pytest.raises(KafkaError, match=message) as refused:
        validate_new_acl(acl)

    assert refused.value.code is ErrorCode.invalid_request


def test_the_broker_checks_come_before_the_controllers_as_in_kafka() -> None:
    # AclApis answers first (CLUSTER name, empty name), AclControlManager after it.
    acl = binding("", resource_type=CLUSTER, pattern_type=PatternType.MATCH, principal="x")

    with pytest.raises(KafkaError, match="CLUSTER resource"):
        validate_new_acl(acl)


@pytest.mark.parametrize(
    "acl_filter",
    [
        AclBindingFilter(ANY_RESOURCE, ANY_ENTRY),
        AclBindingFilter(
            ResourcePatternFilter(ResourceType.TOPIC, "o", PatternType.MATCH), ANY_ENTRY
        ),
        AclBindingFilter(
            ANY_RESOURCE,
            AccessControlEntryFilter("User:bob", "*", AclOperation.READ, AclPermissionType.DENY),
        ),
    ],
)
def test_filters_with_known_fields_are_accepted(acl_filter: AclBindingFilter) -> None:
    validate_acl_filter(acl_filter)


@pytest.mark.parametrize(
    ("acl_filter", "message"),
    [
        (
            AclBindingFilter(
                ResourcePatternFilter(ResourceType.UNKNOWN, None, PatternType.ANY), ANY_ENTRY
            ),
            "Unknown patternFilter",
        ),
        (
            AclBindingFilter(
                ResourcePatternFilter(ResourceType.ANY, None, PatternType.UNKNOWN), ANY_ENTRY
            ),
            "Unknown patternFilter",
        ),
        (
            AclBindingFilter(
                ANY_RESOURCE,
                AccessControlEntryFilter(None, None, AclOperation.UNKNOWN, AclPermissionType.ANY),
            ),
            "Unknown entryFilter",
        ),
        (
            AclBindingFilter(
                ANY_RESOURCE,
                AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.UNKNOWN),
            ),
            "Unknown entryFilter",
        ),
    ],
)
def test_filters_with_an_unknown_field_are_refused(
    acl_filter: AclBindingFilter, message: str
) -> None:
    with pytest.raises(KafkaError, match=message) as refused:
        validate_acl_filter(acl_filter)

    assert refused.value.code is ErrorCode.invalid_request
