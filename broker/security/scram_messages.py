"""The two SCRAM messages a client sends (RFC 5802 section 7), parsed strictly.

Each keeps the exact text the signatures are computed over (client-first-message-bare,
client-final-message-without-proof), so the AuthMessage is what the client signed even
when it sends extensions.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from odradek.broker.security.gs2_header import (
    Gs2Header,
    SaslSyntaxError,
    decode_saslname,
    split_gs2_header,
)

_PRINTABLE = re.compile(r"[\x21-\x2b\x2d-\x7e]+")
_EXTENSION_KEY = re.compile(r"[A-Za-z]+")
TOKEN_AUTH_EXTENSION = "tokenauth"


@dataclass(frozen=True)
class ClientFirstMessage:
    gs2_header: Gs2Header
    bare: str = field(repr=False)
    username: str
    nonce: str = field(repr=False)
    extensions: Mapping[str, str]

    @property
    def token_auth(self) -> bool:
        """Kafka's SCRAM extension for delegation tokens: the name is a token id."""
        return self.extensions.get(TOKEN_AUTH_EXTENSION, "").lower() == "true"


@dataclass(frozen=True)
class ClientFinalMessage:
    without_proof: str = field(repr=False)
    channel_binding: str
    nonce: str = field(repr=False)
    proof: bytes = field(repr=False)


def parse_client_first(message: str) -> ClientFirstMessage:
    header, bare = split_gs2_header(message)
    attributes = bare.split(",")
    if attributes[0].startswith("m="):
        raise SaslSyntaxError("mandatory extensions (m=) are not supported")
    if len(attributes) < 2:
        raise SaslSyntaxError("client-first-message lacks the username or the nonce")
    return ClientFirstMessage(
        gs2_header=header,
        bare=bare,
        username=decode_saslname(_attribute(attributes[0], "n")),
        nonce=_nonce(attributes[1]),
        extensions=_extensions(attributes[2:]),
    )


def parse_client_final(message: str) -> ClientFinalMessage:
    cut = message.rfind(",p=")
    if cut < 0:
        raise SaslSyntaxError("client-final-message lacks the proof")
    without_proof, proof = message[:cut], message[cut + 3 :]
    attributes = without_proof.split(",")
    if len(attributes) < 2:
        raise SaslSyntaxError("client-final-message lacks the channel binding or the nonce")
    _extensions(attributes[2:])
    return ClientFinalMessage(
        without_proof=without_proof,
        channel_binding=_attribute(attributes[0], "c"),
        nonce=_nonce(attributes[1]),
        proof=_base64(proof, "proof"),
    )


def server_first_message(nonce: str, salt: bytes, iterations: int) -> str:
    return f"r={nonce},s={base64.b64encode(salt).decode('ascii')},i={iterations}"


def server_final_message(server_signature: bytes) -> str:
    return f"v={base64.b64encode(server_signature).decode('ascii')}"


def _attribute(text: str, name: str) -> str:
    if not text.startswith(name + "="):
        raise SaslSyntaxError(f"expected the attribute '{name}='")
    return text[2:]


def _nonce(text: str) -> str:
    nonce = _attribute(text, "r")
    if not _PRINTABLE.fullmatch(nonce):
        raise SaslSyntaxError("the nonce is empty or holds characters outside printable ASCII")
    return nonce


def _extensions(attributes: list[str]) -> dict[str, str]:
    extensions = {}
    for attribute in attributes:
        key, equals, value = attribute.partition("=")
        if not _EXTENSION_KEY.fullmatch(key) or not equals or not value or "\x00" in value:
            raise SaslSyntaxError("an extension is not of the form key=value")
        extensions[key] = value
    return extensions


def _base64(text: str, name: str) -> bytes:
    try:
        decoded = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:  # binascii.Error, and UnicodeEncodeError for non-ASCII text
        raise SaslSyntaxError(f"the {name} is not base64") from None
    if not decoded:
        raise SaslSyntaxError(f"the {name} is empty")
    return decoded
