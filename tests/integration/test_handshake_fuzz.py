"""Fuzzing the handshakes a broker meets before it knows who is calling: mutated SASL
exchanges (PLAIN, SCRAM and OAUTHBEARER tokens with bits flipped, bytes inserted, cut or
repeated, under every SaslHandshake/SaslAuthenticate version) and mutated TLS handshakes
(a real ClientHello mutated, garbage records after a finished handshake, handshakes
abandoned half-way). Each connection is answered or closed, never left hanging; the broker
stays up, logs no traceback and serves a well-behaved client afterwards. The cases come
from fixed seeds, so a failure names the one to replay."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import ssl
import struct
from functools import partial

import pytest
from broker_process import BrokerFactory
from kafka_wire import WireClient, encode_header_only
from sasl_wire import SASL_AUTHENTICATE, SASL_HANDSHAKE, authenticate, handshake, plain_token
from secured_broker import SecuredBroker, secured_broker

CASES = 600
ANSWER_TIMEOUT_S = 10.0
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI", "", "plain"]
SEED_TOKENS = {
    "PLAIN": plain_token("bob", "bob-secret"),
    "SCRAM-SHA-256": b"n,,n=dave,r=fyko+d2lbbFgONRv9qkxdawL",
    "SCRAM-SHA-512": b"n,,n=dave,r=rOprNGfwEbeRWgbNEkqO",
    "OAUTHBEARER": b"n,,\x01auth=Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln\x01\x01",
}


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> SecuredBroker:
    directory = tmp_path_factory.mktemp("fuzz")
    keys = directory / "jwks.json"
    keys.write_text('{"keys": []}')
    return secured_broker(
        module_broker_factory,
        directory,
        {
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
            "sasl.oauthbearer.jwks.endpoint.url": keys.as_uri(),
            "sasl.server.max.receive.size": "65536",
        },
    )


def mutated(data: bytes, rng: random.Random) -> bytes:
    """``data`` with a few random edits: bit flips, insertions, cuts and repeats."""
    edited = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(5)
        at = rng.randrange(len(edited) + 1)
        if choice == 0 and edited:
            edited[min(at, len(edited) - 1)] ^= 1 << rng.randrange(8)
        elif choice == 1:
            edited[at:at] = rng.randbytes(rng.randint(1, 16))
        elif choice == 2:
            del edited[at : at + rng.randint(1, 16)]
        elif choice == 3:
            edited[at:at] = edited[at : at + rng.randint(1, 64)] * rng.randint(2, 50)
        else:
            edited[at:at] = bytes([rng.choice(b"\x00\x01,=\xff")]) * rng.randint(1, 8)
    return bytes(edited)


def answered_or_closed(sock: socket.socket) -> None:
    """Read until the broker closes the connection or stops talking; a broker that neither
    answers nor closes within the timeout fails the test."""
    sock.settimeout(ANSWER_TIMEOUT_S)
    try:
        while sock.recv(65536):
            sock.settimeout(0.2)  # answered; whatever else comes, the broker is talking
    except TimeoutError:
        if sock.gettimeout() == ANSWER_TIMEOUT_S:
            raise AssertionError("the broker neither answered nor closed the connection") from None
    except OSError:
        pass  # reset: closed


def sasl_case(secured: SecuredBroker, rng: random.Random) -> None:
    mechanism = rng.choice(MECHANISMS)
    with WireClient.to(secured.sasl_plaintext_bootstrap(), timeout=ANSWER_TIMEOUT_S) as wire:
        shape = rng.randrange(4)
        if shape == 0:  # a frame of the SASL APIs with a mutated body, any version
            api_key = rng.choice([SASL_HANDSHAKE, SASL_AUTHENTICATE])
            body = mutated(rng.choice(list(SEED_TOKENS.values())), rng)
            wire.sock.sendall(encode_header_only(api_key, rng.randint(-1, 5), 7, body))
        elif shape == 1:  # SaslHandshake v0: then bare tokens, no Kafka framing of them
            wire.sock.sendall(encode_header_only(SASL_HANDSHAKE, 0, 1, _string(mechanism)))
            wire.sock.recv(4096)
            token = mutated(SEED_TOKENS.get(mechanism, b"x"), rng)
            wire.sock.sendall(struct.pack(">i", len(token)) + token)
        else:  # SaslHandshake v1, then mutated SaslAuthenticate tokens
            if handshake(wire, mechanism).error_code.value != 0:
                answered_or_closed(wire.sock)
                return
            for _ in range(rng.randint(1, 3)):
                token = mutated(SEED_TOKENS[mechanism], rng)
                if authenticate(wire, token, version=rng.randint(0, 2)).error_code.value != 0:
                    break
        # an exchange may be waiting for the client's next step: the client's end of stream
        # says there is none
        wire.sock.shutdown(socket.SHUT_WR)
        answered_or_closed(wire.sock)


def _string(text: str) -> bytes:
    encoded = text.encode()
    return struct.pack(">h", len(encoded)) + encoded


def client_hello() -> bytes:
    """The first flight of a real TLS client."""
    context = ssl.create_default_context()
    tls = context.wrap_bio(ssl.MemoryBIO(), outgoing := ssl.MemoryBIO(), server_hostname="x")
    with contextlib.suppress(ssl.SSLWantReadError):  # it waits for the ServerHello
        tls.do_handshake()
    return outgoing.read()


def tls_case(secured: SecuredBroker, rng: random.Random, hello: bytes) -> None:
    port = rng.choice([secured.ssl_port, secured.sasl_ssl_port])
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_TIMEOUT_S) as sock:
        shape = rng.randrange(4)
        if shape == 2:  # half a handshake, then the client goes away
            sock.sendall(hello[: rng.randrange(1, len(hello))])
            return
        if shape == 3:  # a finished handshake, then a whole record no key sealed
            context = ssl.create_default_context(cafile=str(secured.ca_file))
            context.load_cert_chain(*secured.client_certificate("fuzzer"))
            with context.wrap_socket(sock, server_hostname="127.0.0.1") as tls:
                tls.do_handshake()
                payload = rng.randbytes(rng.randint(1, 1024))
                kind = rng.choice([20, 21, 22, 23, rng.randrange(256)])
                os.write(tls.fileno(), struct.pack(">BHH", kind, 0x0303, len(payload)) + payload)
                answered_or_closed(tls)
            return
        # a mutated ClientHello or noise may announce more bytes than it brings, which a
        # server rightly waits for: the client's end of stream says there are no more
        sock.sendall(mutated(hello, rng) if shape == 0 else rng.randbytes(rng.randint(1, 2048)))
        sock.shutdown(socket.SHUT_WR)
        answered_or_closed(sock)


def test_mutated_sasl_and_tls_handshakes_never_harm_the_broker(secured: SecuredBroker) -> None:
    hello = client_hello()
    for seed in range(CASES):
        rng = random.Random(seed)
        for case in (sasl_case, partial(tls_case, hello=hello)):
            try:
                case(secured, rng)
            except TimeoutError:
                raise AssertionError(f"seed {seed}, {case}: a request went unanswered") from None
            except (OSError, EOFError):
                pass  # the broker closed the connection (reset, TLS alert): a fine answer
            except AssertionError as failure:
                raise AssertionError(f"seed {seed}, {case}: {failure}") from None
            assert secured.broker.is_running(), f"the broker died at seed {seed}, {case}"
    # what the broker wrote (the harness's first line repeats its command line)
    log = [line for line in secured.broker.log_path.read_text().splitlines()
           if not line.startswith("=== start")]  # fmt: skip
    assert not [line for line in log if "Traceback" in line or " ERROR " in line]
    assert not [line for line in log if "bob-secret" in line]
    with WireClient.to(secured.sasl_plaintext_bootstrap()) as wire:
        assert handshake(wire, "PLAIN").error_code.value == 0
        assert authenticate(wire, plain_token("bob", "bob-secret")).error_code.value == 0
        assert wire.metadata(None).brokers
