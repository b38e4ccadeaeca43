"""A check looks only at the bindings that can cover the resource, however many there are."""

from __future__ import annotations

from acl_testing import ALICE, GROUP, PREFIXED, binding

from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import ResourceType


def test_only_the_bindings_covering_a_resource_are_looked_at() -> None:
    covering = [
        binding("orders-eu"),
        binding("*"),
        binding("o", pattern_type=PREFIXED),
        binding("orders-", pattern_type=PREFIXED),
        binding("orders-eu", pattern_type=PREFIXED),
    ]
    others = (
        [binding(f"orders-eu{n}") for n in range(1000)]
        + [binding(f"orders-eu{n}", pattern_type=PREFIXED) for n in range(1000)]
        + [binding(f"p{n}", pattern_type=PREFIXED) for n in range(1000)]
        + [binding("orders-", pattern_type=PREFIXED, resource_type=GROUP), binding("orders-e")]
    )
    acls = AclIndex(others + covering)

    covered, looked_at = acls.lookup(ResourceType.TOPIC, "orders-eu", ALICE)

    assert covered
    assert sorted((acl.binding for acl in looked_at), key=repr) == sorted(covering, key=repr)


def test_a_resource_is_covered_by_the_bindings_of_other_principals_too() -> None:
    acls = AclIndex([binding(principal="User:bob"), binding("o", pattern_type=PREFIXED)])

    covered, looked_at = acls.lookup(ResourceType.TOPIC, "orders", ALICE)
    assert covered
    assert [acl.binding for acl in looked_at] == [binding("o", pattern_type=PREFIXED)]
    assert acls.lookup(ResourceType.TOPIC, "payments", ALICE) == (False, [])


def test_removing_the_last_prefix_of_a_length_forgets_it() -> None:
    short, long = binding("o", pattern_type=PREFIXED), binding("orders", pattern_type=PREFIXED)
    acls = AclIndex([short, long])

    acls.remove(long)
    assert [acl.binding for acl in acls.lookup(ResourceType.TOPIC, "orders", ALICE)[1]] == [short]
    acls.remove(short)
    assert acls.lookup(ResourceType.TOPIC, "orders", ALICE) == (False, [])
    assert acls.of_type(ResourceType.TOPIC, ALICE) == []
