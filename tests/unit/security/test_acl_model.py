"""The ACL enums carry Kafka's wire codes, and bindings survive the coordination store."""

from __future__ import annotations

import json

import pytest
from acl_testing import binding
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.security.acl_model import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)


def test_codes_are_kafkas() -> None:
    # org.apache.kafka.common.acl.AclOperation and friends: the numbers clients send.
    assert {member.name: member.value for member in ResourceType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "TOPIC": 2,
        "GROUP": 3,
        "CLUSTER": 4,
        "TRANSACTIONAL_ID": 5,
        "DELEGATION_TOKEN": 6,
        "USER": 7,
    }
    assert {member.name: member.value for member in PatternType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "MATCH": 2,
        "LITERAL": 3,
        "PREFIXED": 4,
    }
    assert {member.name: member.value for member in AclOperation} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "ALL": 2,
        "READ": 3,
        "WRITE": 4,
        "CREATE": 5,
        "DELETE": 6,
        "ALTER": 7,
        "DESCRIBE": 8,
        "CLUSTER_ACTION": 9,
        "DESCRIBE_CONFIGS": 10,
        "ALTER_CONFIGS": 11,
        "IDEMPOTENT_WRITE": 12,
        "CREATE_TOKENS": 13,
        "DESCRIBE_TOKENS": 14,
        "TWO_PHASE_COMMIT": 15,
    }
    assert {member.name: member.value for member in AclPermissionType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "DENY": 2,
        "ALLOW": 3,
    }


@pytest.mark.parametrize(
    ("enum_type", "code", "member"),
    [
        (ResourceType, 4, ResourceType.CLUSTER),
        (ResourceType, 8, ResourceType.UNKNOWN),
        (PatternType, 4, PatternType.PREFIXED),
        (PatternType, -1, PatternType.UNKNOWN),
        (AclOperation, 15, AclOperation.TWO_PHASE_COMMIT),
        (AclOperation, 16, AclOperation.UNKNOWN),
        (AclPermissionType, 2, AclPermissionType.DENY),
        (AclPermissionType, 127, AclPermissionType.UNKNOWN),
    ],
)
def test_a_code_decodes_to_its_member_or_to_unknown(
    enum_type: type[ResourceType | PatternType | AclOperation | AclPermissionType],
    code: int,
    member: object,
) -> None:
    assert enum_type.from_code(code) is member


def test_the_stored_form_names_every_field() -> None:
    stored = binding(
        "orders-", pattern_type=PatternType.PREFIXED, host="10.0.0.1", operation=AclOperation.WRITE
    ).to_json()

    assert stored == {
        "resource_type": "TOPIC",
        "resource_name": "orders-",
        "pattern_type": "PREFIXED",
        "principal": "User:alice",
        "host": "10.0.0.1",
        "operation": "WRITE",
        "permission_type": "ALLOW",
    }


bindings = st.builds(
    AclBinding,
    st.builds(
        ResourcePattern, st.sampled_from(ResourceType), st.text(), st.sampled_from(PatternType)
    ),
    st.builds(
        AccessControlEntry,
        st.text(),
        st.text(),
        st.sampled_from(AclOperation),
        st.sampled_from(AclPermissionType),
    ),
)


@given(bindings)
def test_a_binding_round_trips_through_json_text(original: AclBinding) -> None:
    assert AclBinding.from_json(json.loads(json.dumps(original.to_json()))) == original


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("operation", "READ_EVERYTHING", "unknown operation"),
        ("pattern_type", 3, "string pattern_type"),
        ("principal", None, "string principal"),
    ],
)
def test_a_stored_binding_that_is_not_what_to_json_writes_is_refused(
    key: str, value: object, reason: str
) -> None:
    stored = {**binding().to_json(), key: value}

    with pytest.raises(ValueError, match=reason):
        AclBinding.from_json(stored)


def test_a_stored_binding_missing_a_field_is_refused() -> None:
    stored = binding().to_json()
    del stored["host"]

    with pytest.raises(ValueError, match="string host"):
        AclBinding.from_json(stored)
