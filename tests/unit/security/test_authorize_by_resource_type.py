"""``authorize_by_resource_type``: may a principal do an operation on at least one resource
of a type (cases from Kafka's BaseAuthorizerTest and AuthorizerTest)?"""

from __future__ import annotations

import pytest
from acl_testing import ALICE, ALL, ALLOW, BOB, DENY, GROUP, PREFIXED, READ, TOPIC, WRITE, binding

from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    ResourceType,
)
from odradek.broker.security.authorizer import Authorizer
from odradek.broker.security.principal import KafkaPrincipal

HOST1, HOST2 = "192.168.1.1", "192.168.1.2"


def steps(
    *changes: tuple[str, list[AclBinding], bool],
    operation: AclOperation = READ,
    resource_type: ResourceType = TOPIC,
    principal: KafkaPrincipal = ALICE,
    host: str = HOST1,
) -> None:
    """Apply each ``("add" | "remove", bindings, expected)`` and check the answer after it."""
    acls = AclIndex()
    authorizer = Authorizer(acls)
    for number, (change, bindings, expected) in enumerate(changes):
        for acl in bindings:
            if change == "add":
                acls.add(acl)
            else:
                acls.remove(acl)
        answer = authorizer.authorize_by_resource_type(principal, host, operation, resource_type)
        assert answer is expected, f"after step {number}: {change} {bindings}"


def test_an_allow_then_a_deny_of_the_same_resource() -> None:
    allow, deny = binding("sb1", host=HOST1), binding("sb1", host=HOST1, permission=DENY)
    steps(
        ("add", [], False),
        ("add", [allow], True),
        ("add", [deny], False),
        ("remove", [deny], True),
        ("remove", [allow], False),
    )


def test_denies_of_other_principals_hosts_operations_and_types_do_not_dominate() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypeIsolationUnrelatedDenyWontDominateAllow
    acls = AclIndex(
        [
            binding("sb1", host=HOST1, permission=DENY),
            binding("sb1", principal="User:bob", host=HOST1, permission=DENY),
            binding("sb1", host=HOST2, operation=WRITE, permission=DENY),
            binding("sb1", principal="User:bob", host=HOST2, permission=DENY),
            binding("sb1", host=HOST2),
            binding("sb2", host=HOST2, permission=DENY),
            binding("s", resource_type=GROUP, pattern_type=PREFIXED, host=HOST2, permission=DENY),
        ]
    )
    authorizer = Authorizer(acls)

    def allowed(host: str, resource_type: ResourceType) -> bool:
        return authorizer.authorize_by_resource_type(ALICE, host, READ, resource_type)

    assert not allowed(HOST1, TOPIC)
    assert not allowed(HOST1, GROUP)
    assert not allowed(HOST1, ResourceType.TRANSACTIONAL_ID)
    assert not allowed(HOST1, ResourceType.CLUSTER)
    assert allowed(HOST2, TOPIC)


def test_a_deny_of_a_prefix_dominates_allows_it_starts() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypePrefixedResourceDenyDominate
    def group(name: str, permission: AclPermissionType = ALLOW) -> AclBinding:
        return binding(name, resource_type=GROUP, pattern_type=PREFIXED, permission=permission)

    steps(
        ("add", [group("abcde")], True),
        ("add", [group("abcd", DENY)], False),
        ("add", [group("abc")], True),
        ("add", [group("a", DENY)], False),
        ("add", [group("ab")], False),
        resource_type=GROUP,
    )


def test_a_deny_of_the_wildcard_dominates_everything() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWildcardResourceDenyDominate
    steps(
        (
            "add",
            [binding("hello", resource_type=GROUP, pattern_type=PREFIXED, operation=WRITE)],
            True,
        ),
        ("add", [binding("*", resource_type=GROUP, operation=WRITE, permission=DENY)], False),
        ("add", [binding("*", resource_type=GROUP, operation=WRITE)], False),
        ("add", [binding("aloha", resource_type=GROUP, operation=WRITE)], False),
        operation=WRITE,
        resource_type=GROUP,
    )


def test_a_literal_deny_dominates_only_the_same_literal() -> None:
    steps(
        ("add", [binding("a", permission=DENY), binding("ab")], True),
        ("add", [binding("ab", permission=DENY)], False),
        ("add", [binding("ab", pattern_type=PREFIXED)], True),  # a literal deny leaves the prefix
    )


def test_all_counts_for_every_operation_but_nothing_else_is_implied() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllOperationAce
    steps(
        (
            "add",
            [binding("sb1", operation=WRITE, permission=DENY), binding("sb1", operation=ALL)],
            True,
        ),
        ("add", [binding("sb1", operation=ALL, permission=DENY)], False),
    )
    steps(("add", [binding(operation=READ)], False), operation=AclOperation.DESCRIBE)


def test_wildcard_hosts() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllHostAce
    acls = AclIndex()
    authorizer = Authorizer(acls)

    def allowed(host: str) -> bool:
        return authorizer.authorize_by_resource_type(ALICE, host, READ, TOPIC)

    acls.add(binding("sb1", host=HOST1))
    assert allowed(HOST1)
    acls.add(binding("sb1", host="*", permission=DENY))
    assert not allowed(HOST1)
    acls.add(binding("sb2", host=HOST1, permission=DENY))
    assert not allowed(HOST1)
    assert not allowed(HOST2)
    acls.add(binding("sb2", host="*"))
    assert allowed(HOST2)
    acls.add(binding("sb2", host="*", permission=DENY))
    assert not allowed(HOST2)


def test_wildcard_principals() -> None:
    # BaseAuthorizerTest.testAuthorizeByResourceTypeWithAllPrincipalAce
    acls = AclIndex()
    authorizer = Authorizer(acls)

    def allowed(principal: KafkaPrincipal) -> bool:
        return authorizer.authorize_by_resource_type(principal, HOST1, READ, TOPIC)

    acls.add(binding("sb1", host=HOST1))
    assert allowed(ALICE)
    acls.add(binding("sb1", principal="User:*", host=HOST1, permission=DENY))
    assert not allowed(ALICE)
    acls.add(binding("sb2", host=HOST1, permission=DENY))
    assert not allowed(ALICE)
    assert not allowed(BOB)
    acls.add(binding("sb2", principal="User:*", host=HOST1))
    assert allowed(BOB)
    acls.add(binding("sb2", principal="User:*", host=HOST1, permission=DENY))
    assert not allowed(BOB)


def test_a_super_user_is_allowed_whatever_denies() -> None:
    deny_all = [
        binding(
            "*", resource_type=resource_type, principal="User:*", operation=ALL, permission=DENY
        )
        for resource_type in (TOPIC, GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID)
    ]
    authorizer = Authorizer(AclIndex(deny_all), super_users={"User:superuser1", "User:superuser2"})
    superuser = KafkaPrincipal("User", "superuser1")

    for resource_type in (TOPIC, GROUP, ResourceType.CLUSTER, ResourceType.TRANSACTIONAL_ID):
        assert authorizer.authorize_by_resource_type(superuser, "192.0.4.4", READ, resource_type)
        assert not authorizer.authorize_by_resource_type(ALICE, "192.0.4.4", READ, resource_type)


def test_with_allow_everyone_a_resource_no_acl_covers_counts() -> None:
    # Kafka asks first about a resource named "hardcode", which no ACL here covers.
    acls = AclIndex([binding("orders", permission=DENY)])

    assert Authorizer(AclIndex(), allow_everyone_if_no_acl_found=True).authorize_by_resource_type(
        ALICE, HOST1, WRITE, TOPIC
    )
    assert Authorizer(acls, allow_everyone_if_no_acl_found=True).authorize_by_resource_type(
        ALICE, HOST1, READ, TOPIC
    )
    assert not Authorizer(acls).authorize_by_resource_type(ALICE, HOST1, READ, TOPIC)


@pytest.mark.parametrize(
    ("operation", "resource_type"),
    [
        (AclOperation.ANY, TOPIC),
        (AclOperation.UNKNOWN, TOPIC),
        (READ, ResourceType.ANY),
        (READ, ResourceType.UNKNOWN),
    ],
)
def test_a_filter_value_is_no_operation_or_type_to_check(
    operation: AclOperation, resource_type: ResourceType
) -> None:
    with pytest.raises(ValueError, match="needs one"):
        Authorizer(AclIndex()).authorize_by_resource_type(ALICE, HOST1, operation, resource_type)
