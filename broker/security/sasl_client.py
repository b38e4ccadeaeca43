"""The client side of SASL PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER, as a broker logs in
to another broker (the inter-broker listener): pure exchanges, fed the server's tokens and
answering the client's, with the credentials from the JAAS login Kafka configures them in
(``username`` and ``password`` of the PlainLoginModule or ScramLoginModule), or a token
read from a file.

A failure raises ``SaslClientError`` whose message never holds the password or a proof.
"""

from __future__ import annotations

import abc
import base64
import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from odradek.broker.security.jaas_config import JaasConfigError, parse_jaas_config
from odradek.broker.security.scram_credential import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramMechanism,
    salted_password,
)

PASSWORD_MECHANISMS = ("PLAIN", *(m.value for m in ScramMechanism))
CLIENT_MECHANISMS = (*PASSWORD_MECHANISMS, "OAUTHBEARER")
NONCE_BYTES = 24


class SaslClientError(Exception):
    """The exchange cannot go on: bad credentials configured, or the server's answer is not
    what the mechanism allows (a forged or broken server signature, say)."""


@dataclass(frozen=True)
class SaslCredentials:
    username: str
    password: str = field(repr=False)


def credentials_from_jaas(text: str, key: str) -> SaslCredentials:
    """``username`` and ``password`` of the first login module of a JAAS config; ``key``
    names the config key in the messages."""
    try:
        entries = parse_jaas_config(text)
    except JaasConfigError as error:
        raise SaslClientError(f"{key}: {error}") from None
    options = entries[0].options
    username, password = options.get("username"), options.get("password")
    if not username or password is None:
        raise SaslClientError(f"{key}: the login module names no username and password")
    return SaslCredentials(username, password)


class SaslClientExchange(abc.ABC):
    """One authentication attempt: ``first`` is the client's opening token, then each
    server token goes to ``step``, which answers the next client token or None once the
    exchange is complete."""

    mechanism: str
    who: str  # who logs in, for messages

    @abc.abstractmethod
    def first(self) -> bytes: ...

    @abc.abstractmethod
    def step(self, challenge: bytes) -> bytes | None: ...


class PlainClientExchange(SaslClientExchange):
    mechanism = "PLAIN"

    def __init__(self, credentials: SaslCredentials) -> None:
        self._credentials = credentials
        self.who = credentials.username

    def first(self) -> bytes:
        return f"\0{self._credentials.username}\0{self._credentials.password}".encode()

    def step(self, challenge: bytes) -> bytes | None:
        if challenge:
            raise SaslClientError("PLAIN: the server answered with a token; it sends none")
        return None


class ScramClientExchange(SaslClientExchange):
    """RFC 5802's client: client-first, (server-first) client-final, (server-final)."""

    def __init__(
        self, mechanism: ScramMechanism, credentials: SaslCredentials, nonce: str | None = None
    ) -> None:
        self.mechanism = mechanism.value
        self.who = credentials.username
        self._scram = mechanism
        self._credentials = credentials
        self._nonce = nonce or secrets.token_urlsafe(NONCE_BYTES)
        name = credentials.username.replace("=", "=3D").replace(",", "=2C")
        self._first_bare = f"n={name},r={self._nonce}"
        self._server_signature: bytes | None = None
        self._done = False

    def first(self) -> bytes:
        return f"n,,{self._first_bare}".encode()

    def step(self, challenge: bytes) -> bytes | None:
        if self._done:
            raise SaslClientError(f"{self.mechanism}: a token after the exchange completed")
        text = _utf8(challenge, self.mechanism)
        if self._server_signature is None:
            return self._client_final(text).encode()
        attributes = _attributes(text, self.mechanism)
        if "e" in attributes:
            raise SaslClientError(f"{self.mechanism}: the server refused: {attributes['e']}")
        signature = _base64(attributes.get("v", ""), self.mechanism)
        if not hmac.compare_digest(signature, self._server_signature):
            raise SaslClientError(f"{self.mechanism}: the server's signature does not match")
        self._done = True
        return None

    def _client_final(self, server_first: str) -> str:
        attributes = _attributes(server_first, self.mechanism)
        nonce, salt = attributes.get("r", ""), _base64(attributes.get("s", ""), self.mechanism)
        if not nonce.startswith(self._nonce) or nonce == self._nonce:
            raise SaslClientError(f"{self.mechanism}: the server's nonce does not extend ours")
        try:
            iterations = int(attributes.get("i", ""))
        except ValueError:
            raise SaslClientError(f"{self.mechanism}: no iteration count") from None
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise SaslClientError(
                f"{self.mechanism}: {iterations} iterations are outside"
                f" {MIN_ITERATIONS}..{MAX_ITERATIONS}"
            )
        scram = self._scram
        salted = salted_password(scram, self._credentials.password, salt, iterations)
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._first_bare},{server_first},{without_proof}".encode()
        client_key = scram.hmac(salted, b"Client Key")
        signature = scram.hmac(scram.hash(client_key), auth_message)
        proof = bytes(k ^ s for k, s in zip(client_key, signature, strict=True))
        self._server_signature = scram.hmac(scram.hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}"


class OAuthBearerClientExchange(SaslClientExchange):
    """RFC 7628's client with the token in ``token_file``, read at every login (as Kafka's
    login reads a file token endpoint), so a rotated token is used from the next login."""

    mechanism = "OAUTHBEARER"

    def __init__(self, token_file: Path) -> None:
        self._token_file = token_file
        self.who = f"the token in {token_file}"

    def first(self) -> bytes:
        try:
            token = self._token_file.read_text().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise SaslClientError(f"OAUTHBEARER: cannot read {self._token_file}: {error}") from None
        if not token or any(character.isspace() for character in token):
            raise SaslClientError(f"OAUTHBEARER: {self._token_file} holds no token")
        return f"n,,\x01auth=Bearer {token}\x01\x01".encode()

    def step(self, challenge: bytes) -> bytes | None:
        # an error from the server is acknowledged with %x01, and it then fails the login
        return b"\x01" if challenge else None


def client_exchange(mechanism: str, credentials: SaslCredentials) -> SaslClientExchange:
    """A new exchange for a password ``mechanism``; SaslClientError for another."""
    if mechanism == "PLAIN":
        return PlainClientExchange(credentials)
    try:
        return ScramClientExchange(ScramMechanism(mechanism), credentials)
    except ValueError:
        raise SaslClientError(
            f"SASL mechanism {mechanism} does not log in with a password; use one of"
            f" {', '.join(PASSWORD_MECHANISMS)}"
        ) from None


def _utf8(token: bytes, mechanism: str) -> str:
    try:
        return bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        raise SaslClientError(f"{mechanism}: the server's message is not UTF-8") from None


def _attributes(text: str, mechanism: str) -> dict[str, str]:
    found = {}
    for item in text.split(","):
        name, equals, value = item.partition("=")
        if len(name) != 1 or not equals:
            raise SaslClientError(f"{mechanism}: malformed server message")
        found[name] = value
    return found


def _base64(text: str, mechanism: str) -> bytes:
    try:
        decoded = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:
        raise SaslClientError(f"{mechanism}: a server value is not base64") from None
    if not decoded:
        raise SaslClientError(f"{mechanism}: a server value is empty")
    return decoded
