"""SCRAM credentials as the broker stores them (RFC 5802 section 3): the salt, the
iteration count, StoredKey and ServerKey, never the password or SaltedPassword.

They are made either from a password (``derive_credential``, for tools and tests) or from
the SaltedPassword that AlterUserScramCredentials carries (KIP-554: the client salts and
hashes, the controller derives the keys as Kafka's ``ScramControlManager`` does), and
kept in the coordination store as JSON with base64 bytes.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field

from odradek.broker.protocol.errors import ErrorCode, KafkaError

# Kafka's bounds for AlterUserScramCredentials (ScramMechanism, ScramControlManager).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096
SALT_BYTES = 32


class ScramMechanism(enum.Enum):
    SCRAM_SHA_256 = "SCRAM-SHA-256"
    SCRAM_SHA_512 = "SCRAM-SHA-512"

    @property
    def hash_name(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @property
    def digest_size(self) -> int:
        return hashlib.new(self.hash_name).digest_size

    @property
    def wire_type(self) -> int:
        """The mechanism's number in Describe/AlterUserScramCredentials (0 is unknown)."""
        return 1 if self is ScramMechanism.SCRAM_SHA_256 else 2

    @classmethod
    def from_wire_type(cls, wire_type: int) -> ScramMechanism | None:
        return {m.wire_type: m for m in cls}.get(wire_type)

    def hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self.hash_name).digest()

    def hash(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()


class UnacceptableCredential(KafkaError):
    """AlterUserScramCredentials' UNACCEPTABLE_CREDENTIAL, worded as Kafka words it."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.unacceptable_credential, message)


@dataclass(frozen=True)
class ScramCredential:
    """One user's credential for one mechanism. The repr shows no key material."""

    mechanism: ScramMechanism
    salt: bytes = field(repr=False)
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    iterations: int

    def __post_init__(self) -> None:
        size = self.mechanism.digest_size
        if len(self.stored_key) != size or len(self.server_key) != size:
            raise ValueError(f"{self.mechanism.value} keys must be {size} bytes long")
        if self.iterations <= 0:
            raise ValueError("the iteration count must be positive")

    def to_json(self) -> str:
        return json.dumps(
            {
                "mechanism": self.mechanism.value,
                "salt": _b64(self.salt),
                "stored_key": _b64(self.stored_key),
                "server_key": _b64(self.server_key),
                "iterations": self.iterations,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> ScramCredential:
        """Raises ValueError, naming the field at fault but none of its content."""
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"a SCRAM credential is not JSON ({error.msg})") from None
        except UnicodeDecodeError:
            raise ValueError("a SCRAM credential is not UTF-8") from None
        if not isinstance(document, dict):
            raise ValueError("a SCRAM credential must be a JSON object")
        try:
            mechanism = ScramMechanism(document.get("mechanism"))
        except ValueError:
            raise ValueError("a SCRAM credential names an unknown mechanism") from None
        iterations = document.get("iterations")
        if not isinstance(iterations, int) or isinstance(iterations, bool):
            raise ValueError("a SCRAM credential's iterations must be an integer")
        return cls(
            mechanism=mechanism,
            salt=_unb64(document, "salt"),
            stored_key=_unb64(document, "stored_key"),
            server_key=_unb64(document, "server_key"),
            iterations=iterations,
        )


def check_iterations(iterations: int) -> None:
    if iterations < MIN_ITERATIONS:
        raise UnacceptableCredential("Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise UnacceptableCredential("Too many iterations")


def salted_password(
    mechanism: ScramMechanism, password: str, salt: bytes, iterations: int
) -> bytes:
    """RFC 5802's Hi(): PBKDF2 with the mechanism's HMAC. Kafka applies no SASLprep, so
    neither does this: the password's UTF-8 bytes are used as they are."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)


def credential_from_salted_password(
    mechanism: ScramMechanism, *, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """What the controller stores for an AlterUserScramCredentials upsertion."""
    check_iterations(iterations)
    client_key = mechanism.hmac(salted, b"Client Key")
    return ScramCredential(
        mechanism=mechanism,
        salt=salt,
        stored_key=mechanism.hash(client_key),
        server_key=mechanism.hmac(salted, b"Server Key"),
        iterations=iterations,
    )


def derive_credential(
    mechanism: ScramMechanism,
    password: str,
    *,
    salt: bytes | None = None,
    iterations: int = DEFAULT_ITERATIONS,
) -> ScramCredential:
    """A credential for a password, with a fresh random salt unless one is given."""
    check_iterations(iterations)
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    salted = salted_password(mechanism, password, salt, iterations)
    return credential_from_salted_password(
        mechanism, salt=salt, salted=salted, iterations=iterations
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(document: dict[str, object], name: str) -> bytes:
    value = document.get(name)
    if not isinstance(value, str):
        raise ValueError(f"a SCRAM credential's {name} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise ValueError(f"a SCRAM credential's {name} is not valid base64") from None
