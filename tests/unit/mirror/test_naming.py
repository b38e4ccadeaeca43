from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.mirror.config import Selection
from odradek.mirror.naming import NameFilter, NamingPolicy, is_internal
from odradek.mirror.provenance import Provenance, originates_from, provenance_of

EVERYTHING = NameFilter.of(Selection((".*",), ()))
topic_names = st.from_regex(r"[a-zA-Z0-9._-]{1,30}", fullmatch=True)
aliases = st.from_regex(r"[a-z0-9_-]{1,10}", fullmatch=True)


def test_prefix_policy_names_the_mirror_after_the_source_alias() -> None:
    policy = NamingPolicy("prefix", "east", "west")
    assert policy.target_topic("orders") == "east.orders"
    assert policy.checkpoints_topic == "east.checkpoints.internal"
    assert policy.offset_syncs_topic == "east.offset-syncs.internal"


def test_identity_policy_keeps_the_name() -> None:
    assert NamingPolicy("identity", "east", "west").target_topic("orders") == "orders"


def test_a_topic_mirrored_from_the_target_is_not_mirrored_back() -> None:
    policy = NamingPolicy("prefix", "east", "west")
    assert not policy.mirrors("west.orders", EVERYTHING)
    assert policy.mirrors("north.orders", EVERYTHING)  # another cluster's mirror: a real hop


def test_internal_topics_are_never_mirrored() -> None:
    policy = NamingPolicy("identity", "east", "west")
    for name in ("__consumer_offsets", "west.checkpoints.internal", "x.offset-syncs.internal"):
        assert is_internal(name) and not policy.mirrors(name, EVERYTHING)


def test_selection_needs_a_full_match_of_an_include_and_no_exclude() -> None:
    selection = NameFilter.of(Selection(("orders.*", "payments"), (".*-private",)))
    assert selection.matches("orders-eu") and selection.matches("payments")
    assert not selection.matches("payments-eu") and not selection.matches("my-orders")
    assert not selection.matches("orders-private")


@given(a=aliases, b=aliases, topic=topic_names, hops=st.integers(1, 4))
def test_two_clusters_mirroring_each_other_with_prefixes_never_loop(
    a: str, b: str, topic: str, hops: int
) -> None:
    if a == b or is_internal(topic):
        return
    forward, backward = NamingPolicy("prefix", a, b), NamingPolicy("prefix", b, a)
    name = topic
    for hop in range(hops):
        policy = forward if hop % 2 == 0 else backward
        if not policy.mirrors(name, EVERYTHING):
            assert hop > 0  # only a topic that came from the other side stops
            return
        name = policy.target_topic(name)
    assert hops == 1, f"{topic} travelled back as {name}"


@given(alias=aliases, topic=topic_names, partition=st.integers(0, 10_000), offset=st.integers(0))
def test_provenance_header_round_trips(alias: str, topic: str, partition: int, offset: int) -> None:
    provenance = Provenance(alias, topic, partition, offset)
    assert provenance_of([("trace", b"x"), provenance.header()]) == provenance


def test_a_record_that_passed_through_a_cluster_is_recognised_at_any_hop() -> None:
    headers = [
        Provenance("east", "orders", 0, 5).header(),
        Provenance("west", "orders", 1, 9).header(),
    ]
    assert originates_from(headers, "east") and originates_from(headers, "west")
    assert not originates_from(headers, "eas") and not originates_from(None, "east")
    assert provenance_of(headers) == Provenance("west", "orders", 1, 9)
    assert provenance_of([("odradek.mirror.source", b"garbage")]) is None
