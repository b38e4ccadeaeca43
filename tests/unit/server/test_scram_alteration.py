"""AlterUserScramCredentials is judged user by user as Kafka 4.x's ScramControlManager
judges it (each expectation below was checked against a Kafka 4.3.1 broker)."""

from __future__ import annotations

import hashlib

import pytest
from kio.schema.alter_user_scram_credentials.v0.request import (
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.scram_credential import ScramMechanism, derive_credential
from odradek.broker.server.scram_alteration import (
    Alteration,
    alterations_by_user,
    judged_change,
)

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
SALT = b"sixteen byte salt"
IMAGE = MetadataImage(
    "cluster", 0, scram_credentials={("alice", SHA256): derive_credential(SHA256, "alice-secret")}
)


def upsertion(
    name: str, mechanism: int = 1, iterations: int = 8192, password: str = "secret"
) -> ScramCredentialUpsertion:
    """What Kafka's admin client sends: the password salted and hashed (RFC 5802's Hi)."""
    scram = ScramMechanism.from_wire_type(mechanism) or SHA256  # any hash for unknown ones
    salted = hashlib.pbkdf2_hmac(scram.hash_name, password.encode(), SALT, iterations)
    return ScramCredentialUpsertion(
        name=name, mechanism=mechanism, iterations=iterations, salt=SALT, salted_password=salted
    )


def deletion(name: str, mechanism: int = 1) -> ScramCredentialDeletion:
    return ScramCredentialDeletion(name=name, mechanism=mechanism)


def refusal(*alterations: Alteration) -> tuple[ErrorCode, str]:
    with pytest.raises(KafkaError) as refused:
        judged_change(IMAGE, list(alterations))
    return refused.value.code, refused.value.message


def test_an_upsertion_stores_the_keys_of_the_salted_password_never_the_password() -> None:
    key, credential = judged_change(IMAGE, [upsertion("bob", 2, 4096, "bob-secret")])
    assert key == ("bob", SHA512)
    assert credential == derive_credential(SHA512, "bob-secret", salt=SALT, iterations=4096)


def test_a_deletion_of_a_stored_credential_removes_it() -> None:
    assert judged_change(IMAGE, [deletion("alice")]) == (("alice", SHA256), None)


EMPTY_NAME = (ErrorCode.unacceptable_credential, "Username must not be empty")
UNKNOWN_MECHANISM = (ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
TOO_FEW = (ErrorCode.unacceptable_credential, "Too few iterations")
TOO_MANY = (ErrorCode.unacceptable_credential, "Too many iterations")
NOT_FOUND = (
    ErrorCode.resource_not_found,
    "Attempt to delete a user credential that does not exist",
)
DUPLICATE = (
    ErrorCode.duplicate_resource,
    "A user credential cannot be altered twice in the same request",
)


@pytest.mark.parametrize(
    ("alteration", "expected"),
    [
        (upsertion(""), EMPTY_NAME),
        (deletion(""), EMPTY_NAME),
        (upsertion("bob", 0), UNKNOWN_MECHANISM),
        (upsertion("bob", 3), UNKNOWN_MECHANISM),
        (deletion("bob", 0), UNKNOWN_MECHANISM),
        (upsertion("bob", iterations=4095), TOO_FEW),
        (upsertion("bob", iterations=16385), TOO_MANY),
        (deletion("alice", 2), NOT_FOUND),
    ],
)
def test_refusals_carry_kafkas_code_and_message(
    alteration: Alteration, expected: tuple[ErrorCode, str]
) -> None:
    assert refusal(alteration) == expected


def test_iteration_bounds_are_inclusive() -> None:
    for iterations in (4096, 16384):
        assert judged_change(IMAGE, [upsertion("bob", iterations=iterations)])[1] is not None


def test_a_user_is_altered_once_per_request_even_for_two_mechanisms() -> None:
    # What `kafka-configs --add-config 'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]'` sends.
    assert refusal(upsertion("bob", 1), upsertion("bob", 2)) == DUPLICATE
    assert refusal(deletion("alice", 1), upsertion("alice", 2)) == DUPLICATE
    assert refusal(deletion("alice"), deletion("alice")) == DUPLICATE


def test_the_first_alteration_of_a_user_decides_when_it_is_refused() -> None:
    too_few = upsertion("bob", iterations=100)
    assert refusal(too_few, upsertion("bob")) == TOO_FEW
    assert refusal(upsertion("bob"), too_few) == DUPLICATE
    assert refusal(deletion("alice", 2), upsertion("alice")) == NOT_FOUND


def test_users_are_judged_deletions_first_then_upsertions_in_request_order() -> None:
    by_user = alterations_by_user(
        [deletion("carol"), deletion("alice")], [upsertion("bob"), upsertion("carol")]
    )
    assert list(by_user) == ["carol", "alice", "bob"]
    assert [type(a).__name__ for a in by_user["carol"]] == [
        "ScramCredentialDeletion",
        "ScramCredentialUpsertion",
    ]
