from __future__ import annotations

import base64
import json

import pytest
from kafka.admin import UserScramCredentialUpsertion
from kafka.net.sasl.scram import SaslMechanismScram
from sasl_client_drivers import run_kafka_python

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.security.sasl_scram import ScramServerExchange
from odradek.broker.security.scram_credential import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    UnacceptableCredential,
    credential_from_salted_password,
    derive_credential,
)

# RFC 7677 section 3: user "user", password "pencil", this salt, 4096 iterations.
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_a_kafka_python_alter_user_scram_credentials_upsertion_becomes_a_working_credential(
    mechanism: ScramMechanism,
) -> None:
    upsertion = UserScramCredentialUpsertion("alice", mechanism.value, "alice-secret")
    wire_mechanism = ScramMechanism.from_wire_type(int(upsertion.mechanism))
    assert wire_mechanism is mechanism
    credential = credential_from_salted_password(
        wire_mechanism,
        salt=upsertion.salt,
        salted=upsertion.salted_password,
        iterations=upsertion.iterations,
    )
    assert credential == derive_credential(
        mechanism, "alice-secret", salt=upsertion.salt, iterations=upsertion.iterations
    )
    exchange = ScramServerExchange(
        mechanism, lambda user, _: credential if user == "alice" else None, unknown_user_secret=b"k"
    )
    client = SaslMechanismScram(
        sasl_plain_username="alice",
        sasl_plain_password="alice-secret",
        sasl_mechanism=mechanism.value,
    )
    run_kafka_python(client, exchange)
    assert exchange.principal == "User:alice"


def test_the_rfc_7677_keys() -> None:
    credential = derive_credential(ScramMechanism.SCRAM_SHA_256, "pencil", salt=RFC_SALT)
    assert credential.iterations == 4096 and len(credential.stored_key) == 32
    assert len(derive_credential(ScramMechanism.SCRAM_SHA_512, "pencil").server_key) == 64


def test_wire_types_are_kafkas() -> None:
    assert [m.wire_type for m in ScramMechanism] == [1, 2]
    assert ScramMechanism.from_wire_type(0) is None


@pytest.mark.parametrize(
    ("iterations", "message"),
    [(MIN_ITERATIONS - 1, "Too few iterations"), (MAX_ITERATIONS + 1, "Too many iterations")],
)
def test_iterations_outside_kafkas_bounds_are_unacceptable(iterations: int, message: str) -> None:
    with pytest.raises(UnacceptableCredential) as failure:
        derive_credential(ScramMechanism.SCRAM_SHA_512, "pw", iterations=iterations)
    assert failure.value.message == message
    assert failure.value.code is ErrorCode.unacceptable_credential
    with pytest.raises(UnacceptableCredential):
        credential_from_salted_password(
            ScramMechanism.SCRAM_SHA_256, salt=b"s", salted=bytes(32), iterations=iterations
        )
    derive_credential(ScramMechanism.SCRAM_SHA_256, "pw", iterations=MAX_ITERATIONS)


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_json_round_trip_with_base64_bytes(mechanism: ScramMechanism) -> None:
    credential = derive_credential(mechanism, "pw", iterations=8192)
    document = json.loads(credential.to_json())
    assert document["mechanism"] == mechanism.value and document["iterations"] == 8192
    assert base64.b64decode(document["stored_key"]) == credential.stored_key
    assert ScramCredential.from_json(credential.to_json()) == credential
    assert ScramCredential.from_json(credential.to_json().encode()) == credential


def test_the_repr_hides_the_salt_and_keys() -> None:
    credential = derive_credential(ScramMechanism.SCRAM_SHA_256, "pw", salt=RFC_SALT)
    text = repr(credential)
    for secret in (credential.salt, credential.stored_key, credential.server_key):
        assert base64.b64encode(secret).decode() not in text and repr(secret) not in text
    assert "SCRAM-SHA-256" in text and "4096" in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"mechanism": "SCRAM-SHA-1"}, "names an unknown mechanism"),
        ({"iterations": "4096"}, "iterations must be an integer"),
        ({"iterations": True}, "iterations must be an integer"),
        ({"iterations": 0}, "iteration count must be positive"),
        ({"stored_key": "not base64!"}, "stored_key is not valid base64"),
        ({"server_key": None}, "server_key must be a base64 string"),
        ({"server_key": base64.b64encode(b"short").decode()}, "keys must be 32 bytes long"),
    ],
)
def test_a_damaged_stored_credential_is_refused_without_showing_its_content(
    change: dict[str, object], message: str
) -> None:
    document = json.loads(derive_credential(ScramMechanism.SCRAM_SHA_256, "pw").to_json())
    document.update(change)
    with pytest.raises(ValueError, match=message) as failure:
        ScramCredential.from_json(json.dumps(document))
    assert document["salt"] not in str(failure.value)


@pytest.mark.parametrize("text", ["", "[]", "{", b"\xff\xfe"])
def test_what_is_not_a_json_object_is_refused(text: str | bytes) -> None:
    with pytest.raises(ValueError, match="SCRAM credential"):
        ScramCredential.from_json(text)
