"""Client quota entities as Kafka judges them: which entity's quota applies to a client
(the eight levels of precedence, and who shares it), what a DescribeClientQuotas filter
matches, and what AlterClientQuotas accepts."""

from __future__ import annotations

import pytest

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.security.client_quota import (
    CLIENT_ID,
    IP,
    PRODUCER_BYTE_RATE,
    USER,
    QuotaEntity,
    entity_of,
    matches,
    plan_alterations,
    resolve,
)

ALICE_APP: QuotaEntity = entity_of([(USER, "alice"), (CLIENT_ID, "app")])
ALICE_ANY_CLIENT: QuotaEntity = entity_of([(USER, "alice"), (CLIENT_ID, None)])
ALICE: QuotaEntity = entity_of([(USER, "alice")])
ANY_USER_APP: QuotaEntity = entity_of([(USER, None), (CLIENT_ID, "app")])
ANY_USER_ANY_CLIENT: QuotaEntity = entity_of([(USER, None), (CLIENT_ID, None)])
ANY_USER: QuotaEntity = entity_of([(USER, None)])
APP: QuotaEntity = entity_of([(CLIENT_ID, "app")])
ANY_CLIENT: QuotaEntity = entity_of([(CLIENT_ID, None)])
IN_ORDER = [ALICE_APP, ALICE_ANY_CLIENT, ALICE, ANY_USER_APP, ANY_USER_ANY_CLIENT, ANY_USER,
            APP, ANY_CLIENT]  # fmt: skip
# who shares the quota each level sets: (user, client id) tags, as Kafka's metrics name them
SHARED_BY = [("alice", "app"), ("alice", "app"), ("alice", ""), ("alice", "app"),
             ("alice", "app"), ("alice", ""), ("", "app"), ("", "app")]  # fmt: skip


@pytest.mark.parametrize("level", range(len(IN_ORDER)))
def test_the_first_level_that_sets_the_key_wins(level: int) -> None:
    quotas = {
        entity: {PRODUCER_BYTE_RATE: 1000.0 + index}
        for index, entity in enumerate(IN_ORDER)
        if index >= level
    }
    quotas[IN_ORDER[-1]] = {**quotas[IN_ORDER[-1]], "consumer_byte_rate": 7.0}
    assert resolve(quotas, "alice", "app", PRODUCER_BYTE_RATE) == (1000.0 + level, SHARED_BY[level])


def test_a_level_without_the_key_is_skipped_and_no_quota_is_none() -> None:
    quotas = {ALICE_APP: {"consumer_byte_rate": 5.0}, APP: {PRODUCER_BYTE_RATE: 9.0}}
    assert resolve(quotas, "alice", "app", PRODUCER_BYTE_RATE) == (9.0, ("", "app"))
    assert resolve(quotas, "bob", "other", PRODUCER_BYTE_RATE) is None


def test_filters_match_exact_names_defaults_and_specified_types() -> None:
    assert matches(ALICE_APP, {USER: "alice"}, (), strict=False)
    assert not matches(ALICE_APP, {USER: "alice"}, (), strict=True)
    assert matches(ALICE_APP, {USER: "alice"}, (CLIENT_ID,), strict=True)
    assert matches(ANY_USER, {USER: None}, (), strict=True)
    assert not matches(ALICE, {USER: None}, (), strict=False)


def test_alterations_are_judged_one_entity_at_a_time_with_kafkas_messages() -> None:
    ip = entity_of([(IP, "10.0.0.1")])
    results, changes = plan_alterations(
        {ALICE: {PRODUCER_BYTE_RATE: 100.0}},
        [
            (ALICE, [(PRODUCER_BYTE_RATE, None), ("consumer_byte_rate", 2048.0)]),
            (APP, [(PRODUCER_BYTE_RATE, 10.5)]),  # byte rates are integral
            (ip, [(PRODUCER_BYTE_RATE, 1.0)]),  # an ip takes connection_creation_rate only
            (ANY_CLIENT, [(PRODUCER_BYTE_RATE, 1.0), (PRODUCER_BYTE_RATE, 2.0)]),
        ],
    )
    assert results[ALICE] is None
    assert changes == {ALICE: {"consumer_byte_rate": 2048.0}}
    failed = {entity: error for entity, error in results.items() if error is not None}
    assert {error.code for error in failed.values()} == {ErrorCode.invalid_request}
    assert set(failed) == {APP, ip, ANY_CLIENT}
    # Kafka's own quirk: a key given twice ends as a duplicate entity
    assert failed[ANY_CLIENT].message.startswith("Ignoring duplicate entity")
