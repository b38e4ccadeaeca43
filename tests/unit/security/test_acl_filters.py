"""DescribeAcls and DeleteAcls filters select bindings as Kafka's do (cases from Kafka's
ResourcePatternFilterTest and AuthorizerTest)."""

from __future__ import annotations

import pytest
from acl_testing import GROUP, LITERAL, PREFIXED, TOPIC, binding

from odradek.broker.security.acl_filters import (
    ANY_BINDING,
    ANY_ENTRY,
    AccessControlEntryFilter,
    AclBindingFilter,
    ResourcePatternFilter,
)
from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

ANY, MATCH = PatternType.ANY, PatternType.MATCH


@pytest.mark.parametrize(
    ("pattern_filter", "pattern", "selected"),
    [
        pytest.param((TOPIC, "Name", LITERAL), (GROUP, "Name", LITERAL), False, id="other type"),
        pytest.param(
            (TOPIC, "Different", PREFIXED), (TOPIC, "Name", PREFIXED), False, id="other name"
        ),
        pytest.param(
            (TOPIC, "NAME", LITERAL), (TOPIC, "Name", LITERAL), False, id="names are case-sensitive"
        ),
        pytest.param(
            (TOPIC, "Name", LITERAL), (TOPIC, "Name", PREFIXED), False, id="other pattern type"
        ),
        pytest.param(
            (ResourceType.ANY, "Name", PREFIXED), (TOPIC, "Name", PREFIXED), True, id="any type"
        ),
        pytest.param((TOPIC, None, PREFIXED), (TOPIC, "Name", PREFIXED), True, id="any name"),
        pytest.param((TOPIC, None, ANY), (TOPIC, "Name", PREFIXED), True, id="any pattern type"),
        pytest.param(
            (TOPIC, None, MATCH), (TOPIC, "Name", PREFIXED), True, id="match without a name"
        ),
        pytest.param(
            (TOPIC, "Name", LITERAL), (TOPIC, "Name", LITERAL), True, id="literal exactly"
        ),
        pytest.param(
            (TOPIC, "Name", ANY), (TOPIC, "Name", LITERAL), True, id="literal, any pattern"
        ),
        pytest.param((TOPIC, "Name", MATCH), (TOPIC, "Name", LITERAL), True, id="literal, match"),
        pytest.param(
            (TOPIC, "Name-x", MATCH), (TOPIC, "Name", LITERAL), False, id="a literal is no prefix"
        ),
        pytest.param((TOPIC, "*", LITERAL), (TOPIC, "*", LITERAL), True, id="wildcard exactly"),
        pytest.param(
            (TOPIC, "Name", LITERAL), (TOPIC, "*", LITERAL), False, id="literal filter, wildcard"
        ),
        pytest.param(
            (TOPIC, "*", LITERAL), (TOPIC, "Name", LITERAL), False, id="wildcard filter, literal"
        ),
        pytest.param(
            (TOPIC, "Name", ANY), (TOPIC, "*", LITERAL), False, id="any pattern, wildcard"
        ),
        pytest.param(
            (TOPIC, "Name", MATCH), (TOPIC, "*", LITERAL), True, id="match takes the wildcard"
        ),
        pytest.param(
            (TOPIC, "Name", PREFIXED), (TOPIC, "Name", PREFIXED), True, id="prefix exactly"
        ),
        pytest.param(
            (TOPIC, "Name", PREFIXED),
            (TOPIC, "Name-x", PREFIXED),
            False,
            id="shorter prefix filter",
        ),
        pytest.param(
            (TOPIC, "Name-x", PREFIXED), (TOPIC, "Name", PREFIXED), False, id="longer prefix filter"
        ),
        pytest.param(
            (TOPIC, "Name-x", ANY), (TOPIC, "Name", PREFIXED), False, id="any pattern, prefix"
        ),
        pytest.param(
            (TOPIC, "Name-x", MATCH), (TOPIC, "Name", PREFIXED), True, id="match takes prefixes"
        ),
        pytest.param(
            (TOPIC, "Nam", MATCH), (TOPIC, "Name", PREFIXED), False, id="match, longer prefix"
        ),
        pytest.param(
            (TOPIC, "Name", MATCH), (TOPIC, "*", PREFIXED), False, id="a star prefix is no wildcard"
        ),
    ],
)
def test_resource_pattern_filter(
    pattern_filter: tuple[ResourceType, str | None, PatternType],
    pattern: tuple[ResourceType, str, PatternType],
    selected: bool,
) -> None:
    assert ResourcePatternFilter(*pattern_filter).matches(ResourcePattern(*pattern)) is selected


@pytest.mark.parametrize(
    ("entry_filter", "selected"),
    [
        pytest.param(ANY_ENTRY, True, id="any"),
        pytest.param(
            ("User:alice", None, AclOperation.ANY, AclPermissionType.ANY), True, id="principal"
        ),
        pytest.param(
            ("User:*", None, AclOperation.ANY, AclPermissionType.ANY), False, id="not by wildcard"
        ),
        pytest.param((None, "10.0.0.1", AclOperation.ANY, AclPermissionType.ANY), True, id="host"),
        pytest.param(
            (None, "*", AclOperation.ANY, AclPermissionType.ANY), False, id="not by wildcard host"
        ),
        pytest.param((None, None, AclOperation.WRITE, AclPermissionType.ANY), True, id="operation"),
        pytest.param(
            (None, None, AclOperation.READ, AclPermissionType.ANY), False, id="other operation"
        ),
        pytest.param(
            (None, None, AclOperation.ALL, AclPermissionType.ANY), False, id="ALL is exact here"
        ),
        pytest.param((None, None, AclOperation.ANY, AclPermissionType.DENY), True, id="permission"),
        pytest.param(
            (None, None, AclOperation.ANY, AclPermissionType.ALLOW), False, id="other permission"
        ),
    ],
)
def test_entry_filter_compares_exactly(
    entry_filter: AccessControlEntryFilter
    | tuple[str | None, str | None, AclOperation, AclPermissionType],
    selected: bool,
) -> None:
    if isinstance(entry_filter, tuple):
        entry_filter = AccessControlEntryFilter(*entry_filter)
    acl = binding(host="10.0.0.1", operation=AclOperation.WRITE, permission=AclPermissionType.DENY)

    assert entry_filter.matches(acl.entry) is selected


def test_a_match_filter_selects_what_applies_to_a_name_across_resource_types() -> None:
    # Kafka's AuthorizerTest.testAclsFilter.
    foo_read = binding("foo-1")
    foo_write = binding("foo-1", host="192.168.0.1", operation=AclOperation.WRITE)
    bar_describe = binding("bar-1", operation=AclOperation.DESCRIBE)
    bar_prefix = binding("bar-", pattern_type=PREFIXED, principal="User:*")
    group_bar = binding("bar-1", resource_type=GROUP)
    acls = AclIndex([foo_read, foo_write, bar_describe, bar_prefix, group_bar])

    def selected(pattern_filter: ResourcePatternFilter) -> list[AclBinding]:
        return acls.matching(AclBindingFilter(pattern_filter, ANY_ENTRY))

    assert acls.matching(ANY_BINDING) == [foo_read, foo_write, bar_describe, bar_prefix, group_bar]
    assert selected(ResourcePatternFilter(TOPIC, "foo-1", LITERAL)) == [foo_read, foo_write]
    assert selected(ResourcePatternFilter(TOPIC, "bar-", PREFIXED)) == [bar_prefix]
    assert selected(ResourcePatternFilter(ResourceType.ANY, "bar-1", MATCH)) == [
        bar_describe,
        bar_prefix,
        group_bar,
    ]
    assert selected(ResourcePatternFilter(TOPIC, "baz", ANY)) == []
