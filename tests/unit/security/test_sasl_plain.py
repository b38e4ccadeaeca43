from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka.conn import SaslPlainAuthenticator
from hypothesis import given
from hypothesis import strategies as st
from kafka.net.sasl.plain import SaslMechanismPlain
from sasl_client_drivers import run_aiokafka, run_kafka_python

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.security.jaas_config import parse_jaas_config
from odradek.broker.security.plain_users import PlainUsers, PlainUsersError
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, IllegalSaslState
from odradek.broker.security.sasl_plain import PlainServerExchange

USERS = PlainUsers.from_jaas(
    parse_jaas_config(
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-secret" '
        'user_admin="admin-secret" user_alice="alice-secret";'
    )
)
INVALID = "Authentication failed: Invalid username or password"
GENERIC = (
    "Authentication failed during authentication due to invalid credentials "
    "with SASL mechanism PLAIN"
)


def _exchange() -> PlainServerExchange:
    return PlainServerExchange(USERS.verify)


def _fails(token: bytes, exchange: PlainServerExchange | None = None) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as failure:
        (exchange or _exchange()).step(token)
    return failure.value


def test_kafka_python_authenticates_a_user_of_the_jaas_config() -> None:
    exchange = _exchange()
    client = SaslMechanismPlain(sasl_plain_username="alice", sasl_plain_password="alice-secret")
    run_kafka_python(client, exchange)
    assert client.is_authenticated()
    assert exchange.complete and exchange.principal == "User:alice"
    assert exchange.credential_expiry_ms is None


def test_aiokafka_authenticates_too() -> None:
    exchange = _exchange()
    loop = asyncio.new_event_loop()
    try:
        authenticator = SaslPlainAuthenticator(
            loop=loop, sasl_plain_username="admin", sasl_plain_password="admin-secret"
        )
        run_aiokafka(authenticator, exchange)
    finally:
        loop.close()
    assert exchange.principal == "User:admin"


def test_the_jaas_username_and_password_options_are_not_users() -> None:
    assert not USERS.verify("admin", "admin") and not USERS.verify("username", "admin")


@pytest.mark.parametrize(
    "token", [b"\x00alice\x00wrong", b"\x00mallory\x00alice-secret", b"\x00alice\x00ALICE-SECRET"]
)
def test_a_wrong_password_and_an_unknown_user_get_the_same_answer(token: bytes) -> None:
    failure = _fails(token)
    assert failure.message == INVALID and failure.code is ErrorCode.sasl_authentication_failed
    assert "secret" not in failure.reason.lower()


def test_an_authzid_equal_to_the_user_is_accepted_and_another_is_refused() -> None:
    exchange = _exchange()
    assert exchange.step(b"alice\x00alice\x00alice-secret") == b""
    assert exchange.principal == "User:alice"
    assert _fails(b"admin\x00alice\x00alice-secret").message == (
        "Authentication failed: Client requested an authorization id that is different "
        "from username"
    )


@pytest.mark.parametrize(
    "token",
    [
        b"",
        b"alice",
        b"\x00alice",
        b"\x00\x00alice-secret",
        b"\x00alice\x00",
        b"\x00alice\x00alice-secret\x00",
        b"\x00alice\x00alice-secret\x00more",
        b"\x00alice\x00\xffalice-secret",
    ],
)
def test_malformed_messages_get_kafkas_generic_answer(token: bytes) -> None:
    assert _fails(token).message == GENERIC


def test_a_re_authentication_names_its_phase() -> None:
    exchange = PlainServerExchange(USERS.verify, reauthentication=True)
    assert _fails(b"", exchange).message == GENERIC.replace(
        "during authentication", "during re-authentication"
    )


def test_a_token_after_success_or_failure_is_an_illegal_state() -> None:
    done = _exchange()
    done.step(b"\x00alice\x00alice-secret")
    failed = _exchange()
    _fails(b"garbage", failed)
    for exchange in (done, failed):
        with pytest.raises(IllegalSaslState) as failure:
            exchange.step(b"\x00alice\x00alice-secret")
        assert failure.value.code is ErrorCode.illegal_sasl_state
    with pytest.raises(RuntimeError):
        _ = failed.principal


def test_the_users_file_format() -> None:
    users = PlainUsers.parse(
        "# the broker's users\n"
        "alice=alice-secret\n"
        "  bob =  pass=word with spaces  \n"
        "! also a comment\n"
        "\n"
    )
    assert users.verify("alice", "alice-secret")
    assert users.verify("bob", "pass=word with spaces")
    assert not users.verify("bob", "  pass=word with spaces  ")
    assert repr(users) == "PlainUsers(2 users)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("alice=one\nalice=two\n", "line 2: user 'alice' is given twice"),
        ("alice\n", "line 1: expected name=password"),
        ("# ok\n=hunter2\n", "line 2: expected name=password"),
        ("alice=\n", "line 1: expected name=password"),
    ],
)
def test_users_file_errors_name_the_line_but_no_password(text: str, message: str) -> None:
    with pytest.raises(PlainUsersError) as failure:
        PlainUsers.parse(text)
    assert str(failure.value) == message


def test_users_are_read_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "plain-users.properties"
    path.write_text("alice=alice-secret\n", encoding="utf-8")
    exchange = PlainServerExchange(PlainUsers.from_file(path).verify)
    run_kafka_python(
        SaslMechanismPlain(sasl_plain_username="alice", sasl_plain_password="alice-secret"),
        exchange,
    )
    assert exchange.principal == "User:alice"


def test_the_first_plain_login_module_with_a_user_wins_and_other_modules_are_ignored() -> None:
    users = PlainUsers.from_jaas(
        parse_jaas_config(
            'other.Module required user_carol="x";'
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="one";'
            'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="two";'
        )
    )
    assert users.verify("bob", "one") and not users.verify("bob", "two")
    assert not users.verify("carol", "x")


@given(
    st.binary(max_size=64)
    | st.lists(st.sampled_from([b"\x00", b"alice", b"alice-secret", b"\xff"])).map(b"".join)
)
def test_any_bytes_complete_the_exchange_or_raise_authentication_failed(token: bytes) -> None:
    exchange = _exchange()
    try:
        assert exchange.step(token) == b""
    except AuthenticationFailed:
        return
    assert exchange.principal == "User:alice"
