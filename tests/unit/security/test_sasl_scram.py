from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac

import pytest
from aiokafka.conn import ScramAuthenticator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.net.sasl.scram import SaslMechanismScram, ScramClient
from sasl_client_drivers import run_aiokafka, run_kafka_python

from odradek.broker.security.sasl_mechanism import AuthenticationFailed, IllegalSaslState
from odradek.broker.security.sasl_scram import ScramServerExchange
from odradek.broker.security.scram_credential import (
    ScramCredential,
    ScramMechanism,
    derive_credential,
)

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
CREDENTIALS = {
    (user, mechanism): derive_credential(mechanism, password)
    for user, password in [("alice", "alice-secret"), ("a,b=c", "odd-name-secret")]
    for mechanism in ScramMechanism
}


def _lookup(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
    return CREDENTIALS.get((user, mechanism))


def _exchange(mechanism: ScramMechanism = SHA256, **options: object) -> ScramServerExchange:
    arguments: dict[str, object] = {"unknown_user_secret": b"cluster secret"} | options
    return ScramServerExchange(mechanism, _lookup, **arguments)  # type: ignore[arg-type]


def _generic(mechanism: ScramMechanism, phase: str = "authentication") -> str:
    return (
        f"Authentication failed during {phase} due to invalid credentials "
        f"with SASL mechanism {mechanism.value}"
    )


def _fails(exchange: ScramServerExchange, token: bytes) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as failure:
        exchange.step(token)
    return failure.value


def _signed_final(
    mechanism: ScramMechanism, password: str, first_bare: str, server_first: str, without_proof: str
) -> bytes:
    """RFC 5802's client proof, for the messages no real client sends (an authzid, extensions)."""
    params = dict(part.split("=", 1) for part in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(
        mechanism.hash_name, password.encode(), base64.b64decode(params["s"]), int(params["i"])
    )
    client_key = hmac.digest(salted, b"Client Key", mechanism.hash_name)
    stored_key = hashlib.new(mechanism.hash_name, client_key).digest()
    auth_message = f"{first_bare},{server_first},{without_proof}".encode()
    signature = hmac.digest(stored_key, auth_message, mechanism.hash_name)
    proof = bytes(k ^ s for k, s in zip(client_key, signature, strict=True))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def _first_exchange_step(
    first: str, mechanism: ScramMechanism = SHA256
) -> tuple[ScramServerExchange, str]:
    exchange = _exchange(mechanism)
    return exchange, exchange.step(first.encode()).decode()


def test_the_rfc_7677_example_exchange() -> None:
    credential = derive_credential(
        SHA256, "pencil", salt=base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    )
    exchange = ScramServerExchange(
        SHA256,
        lambda user, _: credential if user == "user" else None,
        unknown_user_secret=b"k",
        server_nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
    )
    assert exchange.step(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO") == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert not exchange.complete
    assert (
        exchange.step(
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        )
        == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    )
    assert exchange.complete and exchange.principal == "User:user"
    assert exchange.credential_expiry_ms is None


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_kafka_python_authenticates_and_accepts_the_server_signature(
    mechanism: ScramMechanism,
) -> None:
    exchange = _exchange(mechanism)
    client = SaslMechanismScram(
        sasl_plain_username="alice",
        sasl_plain_password="alice-secret",
        sasl_mechanism=mechanism.value,
    )
    run_kafka_python(client, exchange)  # the client raises on a wrong server signature
    assert client.is_authenticated() and exchange.principal == "User:alice"


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_aiokafka_authenticates_a_name_it_escapes(mechanism: ScramMechanism) -> None:
    exchange = _exchange(mechanism)
    loop = asyncio.new_event_loop()
    try:
        authenticator = ScramAuthenticator(
            loop=loop,
            sasl_plain_username="a,b=c",
            sasl_plain_password="odd-name-secret",
            sasl_mechanism=mechanism.value,
        )
        run_aiokafka(authenticator, exchange)
    finally:
        loop.close()
    assert exchange.principal == "User:a,b=c"


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_a_wrong_password_fails_at_client_final_with_kafkas_generic_message(
    mechanism: ScramMechanism,
) -> None:
    client = ScramClient("alice", "wrong", mechanism.value)
    exchange = _exchange(mechanism)
    client.process_server_first_message(exchange.step(client.first_message()))
    failure = _fails(exchange, client.final_message())
    assert failure.message == _generic(mechanism)
    assert "wrong" not in failure.reason and "invalid client proof" in failure.reason


def test_an_unknown_user_gets_a_stable_plausible_server_first_then_the_same_failure() -> None:
    answers = []
    for _ in range(2):
        client = ScramClient("mallory", "guess", SHA512.value)
        exchange = _exchange(SHA512)
        server_first = exchange.step(client.first_message())
        answers.append(dict(part.split("=", 1) for part in server_first.decode().split(",")))
        client.process_server_first_message(server_first)
        failure = _fails(exchange, client.final_message())
        assert failure.message == _generic(SHA512) and "unknown user" in failure.reason
    assert answers[0]["s"] == answers[1]["s"] and answers[0]["r"] != answers[1]["r"]
    assert answers[0]["i"] == "4096" and len(base64.b64decode(answers[0]["s"])) == 32
    other_secret = _exchange(SHA512, unknown_user_secret=b"another cluster")
    other = other_secret.step(b"n,,n=mallory,r=abc").decode()
    assert f"s={answers[0]['s']}" not in other


def test_an_authzid_equal_to_the_user_is_accepted_with_the_header_as_channel_binding() -> None:
    exchange, server_first = _first_exchange_step("n,a=alice,n=alice,r=cnonce")
    nonce = server_first.split(",")[0][2:]
    binding = base64.b64encode(b"n,a=alice,").decode()
    final = _signed_final(
        SHA256, "alice-secret", "n=alice,r=cnonce", server_first, f"c={binding},r={nonce}"
    )
    assert exchange.step(final).startswith(b"v=")
    assert exchange.principal == "User:alice"


def test_an_authzid_other_than_the_user_is_refused_before_any_lookup() -> None:
    for user in ("alice", "nobody"):
        failure = _fails(_exchange(), f"n,a=admin,n={user},r=cnonce".encode())
        assert failure.message == (
            "Authentication failed: Client requested an authorization id that is different "
            "from username"
        )


def test_delegation_tokens_are_refused_with_a_clear_message() -> None:
    failure = _fails(_exchange(), b"n,,n=token-id,r=cnonce,tokenauth=true")
    assert failure.message == (
        "Authentication failed: delegation tokens (SCRAM extension tokenauth) are not "
        "supported by this broker"
    )


def test_unknown_extensions_are_ignored_and_signed_over_as_sent() -> None:
    first_bare = "n=alice,r=cnonce,tokenauth=false,zz=1"
    exchange, server_first = _first_exchange_step(f"n,,{first_bare}")
    nonce = server_first.split(",")[0][2:]
    final = _signed_final(SHA256, "alice-secret", first_bare, server_first, f"c=biws,r={nonce},x=y")
    assert exchange.step(final).startswith(b"v=")


def test_a_nonce_repeating_the_client_part_is_accepted_as_kafka_accepts_librdkafkas() -> None:
    exchange, server_first = _first_exchange_step("n,,n=alice,r=cnonce")
    doubled = "cnonce" + server_first.split(",")[0][2:]
    final = _signed_final(
        SHA256, "alice-secret", "n=alice,r=cnonce", server_first, f"c=biws,r={doubled}"
    )
    assert exchange.step(final).startswith(b"v=")


def test_a_nonce_that_does_not_end_with_the_servers_is_refused_even_when_signed() -> None:
    exchange, server_first = _first_exchange_step("n,,n=alice,r=cnonce")
    truncated = server_first.split(",")[0][2:-1]
    final = _signed_final(
        SHA256, "alice-secret", "n=alice,r=cnonce", server_first, f"c=biws,r={truncated}"
    )
    failure = _fails(exchange, final)
    assert failure.message == _generic(SHA256) and "nonce" in failure.reason


def test_a_channel_binding_that_does_not_repeat_the_header_is_refused_even_when_signed() -> None:
    exchange, server_first = _first_exchange_step("n,,n=alice,r=cnonce")
    nonce = server_first.split(",")[0][2:]
    final = _signed_final(
        SHA256, "alice-secret", "n=alice,r=cnonce", server_first, f"c=eSws,r={nonce}"
    )
    failure = _fails(exchange, final)
    assert failure.message == _generic(SHA256) and "channel binding" in failure.reason


@pytest.mark.parametrize(
    "first",
    [
        b"p=tls-unique,,n=alice,r=cnonce",
        b"y,,n=alice,r=cnonce",
        b"n,,m=ext,n=alice,r=cnonce",
        b"n,,n=alice",
        b"n,,r=cnonce,n=alice",
        b"n,,n=alice,r=",
        b"n,,n=al=ice,r=cnonce",
        b"n,,n=alice,r=cn\xc3\xa9once",
        b"n,,n=alice,r=cnonce,=x",
        b"n,x,n=alice,r=cnonce",
        b"n,,n=alice,r=cnonce\xff",
        b"",
    ],
)
def test_malformed_client_first_messages_fail_generically(first: bytes) -> None:
    assert _fails(_exchange(), first).message == _generic(SHA256)


def _valid_final(exchange: ScramServerExchange) -> tuple[ScramClient, bytes]:
    client = ScramClient("alice", "alice-secret", SHA256.value)
    client.process_server_first_message(exchange.step(client.first_message()))
    return client, client.final_message()


@pytest.mark.parametrize(
    "damage",
    [
        lambda final: final[:-5],
        lambda final: final.split(b",p=")[0],
        lambda final: final.replace(b"c=biws", b"c=biwz"),
        lambda final: final.replace(b",r=", b",r=x"),
        lambda final: final.split(b",p=")[0] + b",p=" + base64.b64encode(b"\x00" * 32),
        lambda final: final.split(b",p=")[0] + b",p=AAAA",
        lambda final: final.split(b",p=")[0] + b",p=not base64!",
        lambda final: final.split(b",p=")[0] + b",p=",
        lambda final: b"r=" + final,
        lambda final: final + b"\xff",
    ],
)
def test_damaged_client_final_messages_fail_generically(damage: object) -> None:
    exchange = _exchange()
    _, final = _valid_final(exchange)
    assert _fails(exchange, damage(final)).message == _generic(SHA256)  # type: ignore[operator]


def test_a_replayed_proof_fails_on_a_new_exchange() -> None:
    first_exchange = _exchange()
    client, final = _valid_final(first_exchange)
    first_exchange.step(final)
    replay = _exchange()
    replay.step(client.first_message())
    assert _fails(replay, final).message == _generic(SHA256)
    renonced = _exchange()
    new_nonce = renonced.step(client.first_message()).split(b",")[0][2:]
    old_nonce = client.nonce
    failure = _fails(renonced, final.replace(old_nonce, new_nonce))
    assert "invalid client proof" in failure.reason


def test_a_store_that_fails_or_holds_a_bad_credential_fails_the_exchange_generically() -> None:
    def broken(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        raise OSError("etcd unavailable")

    exchange = ScramServerExchange(SHA256, broken, unknown_user_secret=b"k")
    assert _fails(exchange, b"n,,n=alice,r=cnonce").reason == "credentials could not be obtained"
    wrong_mechanism = ScramServerExchange(
        SHA256, lambda user, _: CREDENTIALS[("alice", SHA512)], unknown_user_secret=b"k"
    )
    assert _fails(wrong_mechanism, b"n,,n=alice,r=cnonce").message == _generic(SHA256)
    weak = ScramCredential(SHA256, b"salt", bytes(32), bytes(32), iterations=1000)
    too_few = ScramServerExchange(SHA256, lambda user, _: weak, unknown_user_secret=b"k")
    assert "fewer than the minimum 4096" in _fails(too_few, b"n,,n=alice,r=cnonce").reason


def test_re_authentication_names_its_phase_and_a_finished_exchange_takes_no_more_tokens() -> None:
    exchange = _exchange(SHA512, reauthentication=True)
    assert _fails(exchange, b"garbage").message == _generic(SHA512, "re-authentication")
    with pytest.raises(IllegalSaslState):
        exchange.step(b"n,,n=alice,r=cnonce")
    done = _exchange()
    _, final = _valid_final(done)
    done.step(final)
    with pytest.raises(IllegalSaslState):
        done.step(final)


def _same_final(token: bytes, valid: bytes) -> bool:
    """Whether a mutated final still says the same: base64 leaves the pad bits free, so a
    changed last character can decode to the same proof."""
    head, _, proof = token.rpartition(b",p=")
    valid_head, _, valid_proof = valid.rpartition(b",p=")
    try:
        same_proof = base64.b64decode(proof, validate=True) == base64.b64decode(valid_proof)
    except ValueError:
        return False
    return head == valid_head and same_proof


_PIECES = [b"n,", b",", b"n=", b"a=", b"r=", b"c=biws", b"p=", b"alice", b"=2C", b"\x00", b"\xff"]
_FUZZ = settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])


@_FUZZ
@given(st.binary(max_size=80) | st.lists(st.sampled_from(_PIECES)).map(b"".join))
def test_any_client_first_is_answered_or_refused_with_authentication_failed(token: bytes) -> None:
    exchange = _exchange()
    try:
        server_first = exchange.step(token)
    except AuthenticationFailed:
        return
    assert server_first.startswith(b"r=") and not exchange.complete


@_FUZZ
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=200), st.binary(max_size=4))
def test_any_client_final_but_the_right_one_raises_authentication_failed(
    garbage: bytes, cut: int, splice: bytes
) -> None:
    for final in (garbage, None):
        exchange = _exchange()
        _, valid = _valid_final(exchange)
        token = final if final is not None else valid[:cut] + splice + valid[cut + len(splice) :]
        if _same_final(token, valid):
            continue
        with pytest.raises(AuthenticationFailed):
            exchange.step(token)
