"""Authorization decisions as Kafka's StandardAuthorizer makes them (cases from Kafka's
AuthorizerTest and StandardAuthorizerTest, and one per rule of its semantics)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from acl_testing import (
    ALICE,
    ALL,
    ALLOW,
    BOB,
    CLUSTER,
    DENY,
    DESCRIBE,
    GROUP,
    PREFIXED,
    READ,
    WRITE,
    binding,
)
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.security.acl_filters import ResourcePatternFilter
from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import (
    AclBinding,
    AclOperation,
    PatternType,
    ResourceType,
)
from odradek.broker.security.authorizer import Authorizer
from odradek.broker.security.principal import KafkaPrincipal

HOST = "192.168.1.1"


@dataclass(frozen=True)
class Check:
    acls: list[AclBinding]
    operation: AclOperation = READ
    name: str = "orders"
    principal: KafkaPrincipal = ALICE
    host: str = HOST
    resource_type: ResourceType = ResourceType.TOPIC
    super_users: frozenset[str] = field(default_factory=frozenset)
    allow_everyone: bool = False

    def decide(self) -> bool:
        authorizer = Authorizer(
            AclIndex(self.acls),
            super_users=self.super_users,
            allow_everyone_if_no_acl_found=self.allow_everyone,
        )
        return authorizer.authorize(
            self.principal, self.host, self.operation, self.resource_type, self.name
        )


CHECKS = [
    # What covers a resource: its literal name, the wildcard, its prefixes.
    pytest.param(Check([]), False, id="no acl: denied"),
    pytest.param(Check([binding()]), True, id="literal allow"),
    pytest.param(Check([binding("other")]), False, id="literal of another name"),
    pytest.param(Check([binding("o")], name="orders"), False, id="a literal is no prefix"),
    pytest.param(Check([binding("ord", pattern_type=PREFIXED)]), True, id="prefix allow"),
    pytest.param(
        Check([binding("orders", pattern_type=PREFIXED)]), True, id="prefix of the whole name"
    ),
    pytest.param(Check([binding("orders-", pattern_type=PREFIXED)]), False, id="longer prefix"),
    pytest.param(
        Check([binding("Ord", pattern_type=PREFIXED)]), False, id="prefixes are case-sensitive"
    ),
    pytest.param(Check([binding("*")]), True, id="wildcard allow"),
    pytest.param(
        Check([binding("*", pattern_type=PREFIXED)]), False, id="a star prefix is no wildcard"
    ),
    pytest.param(Check([binding("*", pattern_type=PREFIXED)], name="*x"), True, id="a star prefix"),
    pytest.param(
        Check([binding("orders", resource_type=GROUP)]), False, id="another resource type"
    ),
    # Kafka 4.3's StandardAuthorizer skips the wildcard for a name that starts with "*" (its
    # sorted scan takes "*" for a literal prefix of the name): a bug not copied here.
    pytest.param(
        Check([binding("*", resource_type=GROUP)], resource_type=GROUP, name="*x"),
        True,
        id="the wildcard covers names starting with a star",
    ),
    # Who and from where.
    pytest.param(Check([binding(principal="User:bob")]), False, id="another principal"),
    pytest.param(Check([binding(principal="User:*")]), True, id="wildcard principal"),
    pytest.param(
        Check([binding(principal="User:*")], principal=KafkaPrincipal("Group", "ops")),
        True,
        id="User:* covers principals of every type",
    ),
    pytest.param(
        Check([binding(principal="Group:*")], principal=KafkaPrincipal("Group", "ops")),
        False,
        id="only User:* is a wildcard",
    ),
    pytest.param(
        Check([binding(principal="user:alice")]), False, id="principal types are case-sensitive"
    ),
    pytest.param(Check([binding(host=HOST)]), True, id="the client's host"),
    pytest.param(Check([binding(host="192.168.1.2")]), False, id="another host"),
    pytest.param(Check([binding(host="*")], host="::1"), True, id="wildcard host"),
    # DENY wins.
    pytest.param(Check([binding(), binding(permission=DENY)]), False, id="deny beats allow"),
    pytest.param(
        Check([binding(), binding("ord", pattern_type=PREFIXED, permission=DENY)]),
        False,
        id="prefixed deny beats literal allow",
    ),
    pytest.param(Check([binding(), binding("*", permission=DENY)]), False, id="wildcard deny"),
    pytest.param(
        Check(
            [binding("*"), binding(principal="User:*", host=HOST, operation=ALL, permission=DENY)]
        ),
        False,
        id="deny all for everyone from a host",
    ),
    pytest.param(
        Check([binding(), binding(operation=WRITE, permission=DENY)]),
        True,
        id="deny of another operation",
    ),
    pytest.param(
        Check([binding(), binding(principal="User:bob", permission=DENY)]),
        True,
        id="deny for another principal",
    ),
    pytest.param(
        Check([binding(), binding(host="10.0.0.9", permission=DENY)]),
        True,
        id="deny for another host",
    ),
    # Implied operations: only by ALLOW.
    *(
        pytest.param(
            Check([binding(operation=granted)], operation=DESCRIBE),
            True,
            id=f"{granted.name} implies DESCRIBE",
        )
        for granted in (READ, WRITE, AclOperation.DELETE, AclOperation.ALTER, DESCRIBE)
    ),
    pytest.param(
        Check([binding(operation=AclOperation.CREATE)], operation=DESCRIBE),
        False,
        id="CREATE implies no DESCRIBE",
    ),
    pytest.param(
        Check(
            [binding(operation=AclOperation.ALTER_CONFIGS)], operation=AclOperation.DESCRIBE_CONFIGS
        ),
        True,
        id="ALTER_CONFIGS implies DESCRIBE_CONFIGS",
    ),
    pytest.param(
        Check([binding(operation=AclOperation.ALTER_CONFIGS)], operation=AclOperation.ALTER),
        False,
        id="ALTER_CONFIGS is no ALTER",
    ),
    pytest.param(
        Check([binding(operation=DESCRIBE)], operation=READ), False, id="DESCRIBE implies no READ"
    ),
    pytest.param(
        Check([binding(operation=READ)], operation=WRITE), False, id="READ implies no WRITE"
    ),
    pytest.param(
        Check([binding(operation=DESCRIBE), binding(permission=DENY)], operation=DESCRIBE),
        True,
        id="DENY READ does not deny DESCRIBE",
    ),
    pytest.param(
        Check(
            [
                binding(operation=ALL),
                binding(operation=AclOperation.ALTER_CONFIGS, permission=DENY),
            ],
            operation=AclOperation.DESCRIBE_CONFIGS,
        ),
        True,
        id="DENY ALTER_CONFIGS does not deny DESCRIBE_CONFIGS",
    ),
    pytest.param(
        Check([binding(operation=ALL)], operation=AclOperation.TWO_PHASE_COMMIT),
        True,
        id="ALL allows all",
    ),
    pytest.param(
        Check(
            [binding(operation=ALL), binding(operation=ALL, permission=DENY)], operation=DESCRIBE
        ),
        False,
        id="DENY ALL denies all",
    ),
    # super.users and allow.everyone.if.no.acl.found.
    pytest.param(
        Check(
            [binding("*", principal="User:*", operation=ALL, permission=DENY)],
            super_users=frozenset({"User:alice"}),
        ),
        True,
        id="a super user passes any deny",
    ),
    pytest.param(Check([], super_users=frozenset({"User:bob"})), False, id="another super user"),
    pytest.param(Check([], allow_everyone=True), True, id="no acl at all: everyone allowed"),
    pytest.param(
        Check([binding("payments")], allow_everyone=True), True, id="acls on other resources only"
    ),
    pytest.param(
        Check([binding(principal="User:bob")], allow_everyone=True),
        False,
        id="an acl for someone else covers the resource",
    ),
    pytest.param(
        Check([binding("*", operation=WRITE)], allow_everyone=True),
        False,
        id="a wildcard acl for another operation covers the resource",
    ),
    pytest.param(
        Check([binding("ord", pattern_type=PREFIXED, host="10.0.0.9")], allow_everyone=True),
        False,
        id="a prefixed acl from another host covers the resource",
    ),
]


@pytest.mark.parametrize(("check", "allowed"), CHECKS)
def test_authorize(check: Check, allowed: bool) -> None:
    assert check.decide() is allowed


def test_kafkas_topic_acl_scenario() -> None:
    # AuthorizerTest.testTopicAcl: alice READ from both hosts but DENY from host1, WRITE
    # from host1, DESCRIBE from anywhere; bob READ and batman WRITE from anywhere.
    host1, host2 = "192.168.1.1", "192.168.1.2"
    acls = AclIndex(
        [
            binding(host=host1),
            binding(host=host2),
            binding(host=host1, permission=DENY),
            binding(host=host1, operation=WRITE),
            binding(operation=DESCRIBE),
            binding(principal="User:bob"),
            binding(principal="User:batman", operation=WRITE),
        ]
    )
    authorizer = Authorizer(acls)

    def allowed(principal: KafkaPrincipal, host: str, operation: AclOperation) -> bool:
        return authorizer.authorize(principal, host, operation, ResourceType.TOPIC, "orders")

    batman = KafkaPrincipal("User", "batman")
    assert allowed(ALICE, host2, READ)
    assert not allowed(ALICE, host1, READ)
    assert allowed(ALICE, host1, WRITE)
    assert not allowed(ALICE, host2, WRITE)
    assert allowed(ALICE, host1, DESCRIBE)
    assert allowed(ALICE, host2, DESCRIBE)
    assert not allowed(ALICE, host1, AclOperation.ALTER)
    assert allowed(BOB, host1, DESCRIBE)
    assert allowed(batman, host1, DESCRIBE)
    assert allowed(BOB, host1, READ)
    assert allowed(batman, host1, WRITE)


def test_kafkas_deny_precedence_with_operation_all() -> None:
    # StandardAuthorizerTest.testDenyPrecedenceWithOperationAll.
    acls = AclIndex(
        [
            binding("foo", operation=ALL, permission=DENY),
            binding("foo", pattern_type=PREFIXED),
            binding("foo", principal="User:*", operation=ALL, permission=DENY),
            binding("foo", pattern_type=PREFIXED, principal="User:*", operation=DESCRIBE),
        ]
    )
    authorizer = Authorizer(acls)

    def allowed(principal: KafkaPrincipal, operation: AclOperation, name: str) -> bool:
        return authorizer.authorize(principal, HOST, operation, ResourceType.TOPIC, name)

    assert [
        allowed(ALICE, op, name)
        for op, name in [(WRITE, "foo"), (READ, "foo"), (DESCRIBE, "foo"), (READ, "foobar")]
    ] == [False, False, False, True]
    assert [
        allowed(BOB, op, name)
        for op, name in [
            (DESCRIBE, "foo"),
            (READ, "foo"),
            (WRITE, "foo"),
            (DESCRIBE, "foobaz"),
            (READ, "foobaz"),
        ]
    ] == [False, False, False, True, False]


def test_implications_on_the_cluster_resource() -> None:
    # AuthorizerTest.testAclInheritance: what an ALLOW of each operation allows.
    implied = {
        ALL: set(AclOperation) - {AclOperation.UNKNOWN, AclOperation.ANY},
        READ: {READ, DESCRIBE},
        WRITE: {WRITE, DESCRIBE},
        AclOperation.DELETE: {AclOperation.DELETE, DESCRIBE},
        AclOperation.ALTER: {AclOperation.ALTER, DESCRIBE},
        AclOperation.ALTER_CONFIGS: {AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS},
        DESCRIBE: {DESCRIBE},
        AclOperation.IDEMPOTENT_WRITE: {AclOperation.IDEMPOTENT_WRITE},
    }
    for granted, expected in implied.items():
        authorizer = Authorizer(
            AclIndex([binding("kafka-cluster", resource_type=CLUSTER, operation=granted)])
        )
        allowed = {
            op
            for op in AclOperation
            if op not in (AclOperation.UNKNOWN, AclOperation.ANY)
            and authorizer.authorize(ALICE, HOST, op, CLUSTER, "kafka-cluster")
        }
        assert allowed == expected, granted


def test_many_prefixes_of_other_names_do_not_hide_the_one_that_applies() -> None:
    # AuthorizerTest.testAuthorizeWithPrefixedResource.
    denied = [
        "a_other",
        "foo-1",
        "foo-2",
        "foo-3-zzz",
        "fooo-1",
        "fo-1",
        "fop-1",
        "fon-1",
        "fon-",
        "z_other",
    ]
    acls = AclIndex(
        [binding(name, pattern_type=PREFIXED, permission=DENY) for name in denied]
        + [binding("a_other", permission=DENY), binding("z_other", permission=DENY)]
        + [binding("foo", pattern_type=PREFIXED)]
    )

    assert Authorizer(acls).authorize(ALICE, HOST, READ, ResourceType.TOPIC, "foo-orders")


def test_the_index_follows_additions_and_removals() -> None:
    acls = AclIndex()
    authorizer = Authorizer(acls)
    allow_prefix = binding("ord", pattern_type=PREFIXED)
    deny_literal = binding(permission=DENY)

    assert acls.add(allow_prefix)
    assert not acls.add(allow_prefix)  # a set, as in Kafka
    assert authorizer.authorize(ALICE, HOST, READ, ResourceType.TOPIC, "orders")
    assert acls.add(deny_literal)
    assert not authorizer.authorize(ALICE, HOST, READ, ResourceType.TOPIC, "orders")
    assert acls.remove(deny_literal)
    assert not acls.remove(deny_literal)
    assert authorizer.authorize(ALICE, HOST, READ, ResourceType.TOPIC, "orders")
    assert acls.remove(allow_prefix)
    assert len(acls) == 0
    assert not authorizer.authorize(ALICE, HOST, READ, ResourceType.TOPIC, "orders")


# A reference that reads Kafka's rules off the filters: the bindings that cover a resource
# are those a MATCH filter on its name selects.
IMPLIED_BY_ALLOW = {
    READ: DESCRIBE,
    WRITE: DESCRIBE,
    AclOperation.DELETE: DESCRIBE,
    AclOperation.ALTER: DESCRIBE,
    AclOperation.ALTER_CONFIGS: AclOperation.DESCRIBE_CONFIGS,
}


def reference_decision(
    acls: list[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    name: str,
    allow_everyone: bool,
) -> bool:
    covering = [
        acl
        for acl in acls
        if ResourcePatternFilter(ResourceType.TOPIC, name, PatternType.MATCH).matches(acl.pattern)
    ]

    def applies(acl: AclBinding) -> bool:
        entry = acl.entry
        op_matches = entry.operation in (operation, ALL) or (
            entry.permission is ALLOW and IMPLIED_BY_ALLOW.get(entry.operation) is operation
        )
        return (
            op_matches
            and entry.principal in (str(principal), "User:*")
            and entry.host in (host, "*")
        )

    if any(applies(acl) and acl.entry.permission is DENY for acl in covering):
        return False
    if any(applies(acl) for acl in covering):
        return True
    return not covering and allow_everyone


names = st.sampled_from(["a", "ab", "abc", "b", "ba", "*"])
random_bindings = st.builds(
    binding,
    names,
    pattern_type=st.sampled_from([PatternType.LITERAL, PREFIXED]),
    principal=st.sampled_from(["User:alice", "User:bob", "User:*"]),
    host=st.sampled_from(["*", "h1", "h2"]),
    operation=st.sampled_from(
        [READ, WRITE, DESCRIBE, ALL, AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS]
    ),
    permission=st.sampled_from([ALLOW, DENY]),
)


@given(
    acls=st.lists(random_bindings, max_size=12, unique=True),
    removed=st.sets(st.integers(0, 11), max_size=4),
    principal=st.sampled_from([ALICE, BOB]),
    host=st.sampled_from(["h1", "h2"]),
    operation=st.sampled_from([READ, WRITE, DESCRIBE, AclOperation.DESCRIBE_CONFIGS]),
    name=st.sampled_from(["a", "ab", "abc", "abd", "b", "c", "*"]),
    allow_everyone=st.booleans(),
)
def test_the_index_decides_as_the_rules_read_off_the_filters(
    acls: list[AclBinding],
    removed: set[int],
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    name: str,
    allow_everyone: bool,
) -> None:
    index = AclIndex(acls)
    for position in removed & set(range(len(acls))):
        index.remove(acls[position])
    kept = [acl for position, acl in enumerate(acls) if position not in removed]
    authorizer = Authorizer(index, allow_everyone_if_no_acl_found=allow_everyone)

    assert authorizer.authorize(
        principal, host, operation, ResourceType.TOPIC, name
    ) is reference_decision(kept, principal, host, operation, name, allow_everyone)
