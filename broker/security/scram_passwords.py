"""SASL/PLAIN passwords checked against the cluster's SCRAM credentials (Odradek's own
``sasl.plain.check.scram.credentials``), so one credential, managed with
AlterUserScramCredentials, serves both mechanisms and a change reaches every broker at once.

A password matches when it derives the stored StoredKey for either SCRAM mechanism
(SHA-512 first). Deriving costs the credential's PBKDF2 iterations, so each user's last
verified password is remembered as a salted digest and checked first; an unknown user costs
the same derivation as a known one.
"""

from __future__ import annotations

import hmac
import secrets

from odradek.broker.security.sasl_scram import ScramCredentialLookup
from odradek.broker.security.scram_credential import (
    DEFAULT_ITERATIONS,
    SALT_BYTES,
    ScramCredential,
    ScramMechanism,
    salted_password,
)

_CHECK_ORDER = (ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256)


class ScramPasswords:
    def __init__(self, credentials: ScramCredentialLookup) -> None:
        self._credentials = credentials
        self._secret = secrets.token_bytes(SALT_BYTES)
        self._verified: dict[str, tuple[ScramCredential, bytes]] = {}

    def __repr__(self) -> str:
        return "ScramPasswords()"

    def verify(self, username: str, password: str) -> bool:
        found = [
            credential
            for mechanism in _CHECK_ORDER
            if (credential := self._credentials(username, mechanism)) is not None
        ]
        if not found:
            _derive_stored_key(ScramMechanism.SCRAM_SHA_512, password, self._secret)
            return False
        digest = hmac.digest(self._secret, password.encode("utf-8", "surrogatepass"), "sha256")
        remembered = self._verified.get(username)
        if (
            remembered is not None
            and remembered[0] in found
            and hmac.compare_digest(remembered[1], digest)
        ):
            return True
        for credential in found:
            stored_key = _derive_stored_key(
                credential.mechanism, password, credential.salt, credential.iterations
            )
            if hmac.compare_digest(stored_key, credential.stored_key):
                self._verified[username] = (credential, digest)
                return True
        return False


def _derive_stored_key(
    mechanism: ScramMechanism, password: str, salt: bytes, iterations: int = DEFAULT_ITERATIONS
) -> bytes:
    salted = salted_password(mechanism, password, salt, iterations)
    return mechanism.hash(mechanism.hmac(salted, b"Client Key"))
