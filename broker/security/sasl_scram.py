"""The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's
``ScramSaslServer`` runs it: client-first, server-first, client-final, server-final.

Where Kafka's wording reaches the client it is kept: a plain failure becomes "...due to
invalid credentials with SASL mechanism SCRAM-SHA-...", an authzid other than the user
gets Kafka's own sentence. Two things are stricter than Kafka:

- An unknown user is not refused at client-first (which would tell a client which names
  exist). It gets a server-first with a salt derived from a broker secret and the name, so
  it looks like a real user's and stays the same across attempts, and fails at
  client-final exactly as a wrong password does.
- The channel-binding attribute must repeat the gs2 header (``biws`` for ``n,,``), as the
  RFC requires; Kafka does not look at it.
"""

from __future__ import annotations

import base64
import hmac
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from odradek.broker.security.gs2_header import SaslSyntaxError
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, SaslServerExchange
from odradek.broker.security.scram_credential import (
    DEFAULT_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
)
from odradek.broker.security.scram_messages import (
    ClientFirstMessage,
    parse_client_final,
    parse_client_first,
    server_final_message,
    server_first_message,
)

log = logging.getLogger(__name__)

ScramCredentialLookup = Callable[[str, ScramMechanism], ScramCredential | None]
"""(user name, mechanism) -> the stored credential, or None when the user has none."""

NONCE_BYTES = 24


@dataclass(frozen=True)
class _AwaitingClientFinal:
    first: ClientFirstMessage
    server_first: str
    nonce: str
    credential: ScramCredential
    known_user: bool


class ScramServerExchange(SaslServerExchange):
    def __init__(
        self,
        mechanism: ScramMechanism,
        credentials: ScramCredentialLookup,
        *,
        unknown_user_secret: bytes,
        reauthentication: bool = False,
        server_nonce: Callable[[], str] = lambda: secrets.token_urlsafe(NONCE_BYTES),
    ) -> None:
        super().__init__(reauthentication=reauthentication)
        self.mechanism = mechanism.value
        self._scram = mechanism
        self._credentials = credentials
        self._unknown_user_secret = unknown_user_secret
        self._server_nonce = server_nonce
        self._awaiting: _AwaitingClientFinal | None = None

    def _evaluate(self, token: bytes) -> bytes:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            raise self._invalid_credentials("a SCRAM message is not UTF-8") from None
        if self._awaiting is None:
            return self._client_first(text).encode()
        awaiting, self._awaiting = self._awaiting, None
        return self._client_final(awaiting, text).encode()

    def _client_first(self, text: str) -> str:
        try:
            first = parse_client_first(text)
        except SaslSyntaxError as error:
            raise self._invalid_credentials(
                f"invalid SCRAM client-first message: {error}"
            ) from None
        if first.gs2_header.authzid and first.gs2_header.authzid != first.username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        if first.token_auth:
            raise AuthenticationFailed(
                "Authentication failed: delegation tokens (SCRAM extension tokenauth) "
                "are not supported by this broker"
            )
        credential = self._lookup(first.username)
        known_user = credential is not None
        if credential is None:
            credential = self._decoy_credential(first.username)
        if credential.iterations < MIN_ITERATIONS:
            raise self._invalid_credentials(
                f"the stored credential of {first.username!r} has {credential.iterations} "
                f"iterations, fewer than the minimum {MIN_ITERATIONS} for {self.mechanism}"
            )
        nonce = first.nonce + self._server_nonce()
        server_first = server_first_message(nonce, credential.salt, credential.iterations)
        self._awaiting = _AwaitingClientFinal(first, server_first, nonce, credential, known_user)
        return server_first

    def _client_final(self, awaiting: _AwaitingClientFinal, text: str) -> str:
        user = awaiting.first.username
        try:
            final = parse_client_final(text)
        except SaslSyntaxError as error:
            raise self._invalid_credentials(
                f"invalid SCRAM client-final message: {error}"
            ) from None
        binding = base64.b64encode(awaiting.first.gs2_header.text.encode()).decode("ascii")
        if final.channel_binding != binding:
            raise self._invalid_credentials("the channel binding does not repeat the gs2 header")
        # Kafka checks only that the nonce ends with the server-first's: librdkafka
        # 2.0 (Debian 12's kcat) sends its own nonce twice (r=<client><client><server>).
        if not final.nonce.endswith(awaiting.nonce):
            raise self._invalid_credentials("Invalid client nonce in the final client message.")
        credential = awaiting.credential
        if len(final.proof) != self._scram.digest_size:
            raise self._invalid_credentials("the client proof has the wrong length")
        auth_message = f"{awaiting.first.bare},{awaiting.server_first},{final.without_proof}"
        client_signature = self._scram.hmac(credential.stored_key, auth_message.encode())
        client_key = bytes(p ^ s for p, s in zip(final.proof, client_signature, strict=True))
        proof_matches = hmac.compare_digest(self._scram.hash(client_key), credential.stored_key)
        if not awaiting.known_user:
            raise self._invalid_credentials(f"unknown user {user!r}")
        if not proof_matches:
            raise self._invalid_credentials(f"invalid client proof for user {user!r}")
        self._succeed(user)
        return server_final_message(self._scram.hmac(credential.server_key, auth_message.encode()))

    def _lookup(self, user: str) -> ScramCredential | None:
        try:
            credential = self._credentials(user, self._scram)
        except Exception as error:
            # Kafka's "Credentials could not be obtained": the store failed, not the client.
            log.warning("SCRAM credentials of %r could not be obtained: %r", user, error)
            raise self._invalid_credentials("credentials could not be obtained") from None
        if credential is not None and credential.mechanism is not self._scram:
            raise self._invalid_credentials(
                f"the credential found for {user!r} is not {self.mechanism}"
            )
        return credential

    def _decoy_credential(self, user: str) -> ScramCredential:
        """What an unknown user is answered with: a salt no one can tell from a real one
        and keys no proof can match."""
        salt = hmac.digest(
            self._unknown_user_secret, f"{self.mechanism}\x00{user}".encode(), "sha256"
        )
        size = self._scram.digest_size
        return ScramCredential(
            mechanism=self._scram,
            salt=salt,
            stored_key=secrets.token_bytes(size),
            server_key=secrets.token_bytes(size),
            iterations=DEFAULT_ITERATIONS,
        )
