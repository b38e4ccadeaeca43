"""The GS2 header (RFC 5801) that opens a SCRAM client-first message and an OAUTHBEARER
initial response, and the ``saslname`` escaping both use for names.

Like Kafka, only ``n`` (no channel binding) is accepted: ``p=`` asks for a binding the
broker cannot offer and ``y`` claims the client could have used one.
"""

from __future__ import annotations

from dataclasses import dataclass


class SaslSyntaxError(ValueError):
    """A client message that does not follow its grammar; the text names the rule broken,
    never the offending input."""


@dataclass(frozen=True)
class Gs2Header:
    text: str
    """The header exactly as sent (``n,,`` or ``n,a=alice,``): SCRAM's channel-binding
    attribute must repeat it."""
    authzid: str
    """The authorization identity the client asks for, unescaped; empty when absent."""


def split_gs2_header(message: str) -> tuple[Gs2Header, str]:
    """The header and the rest of the message after it."""
    if message.startswith("p="):
        raise SaslSyntaxError("channel binding (gs2 flag 'p') is not supported")
    if message.startswith("y,"):
        raise SaslSyntaxError("gs2 flag 'y' is not supported")
    if not message.startswith("n,"):
        raise SaslSyntaxError("the message does not start with the gs2 header 'n,'")
    end = message.find(",", 2)
    if end < 0:
        raise SaslSyntaxError("the gs2 header is not terminated by ','")
    authzid = message[2:end]
    if authzid and not authzid.startswith("a="):
        raise SaslSyntaxError("the gs2 header's authzid does not start with 'a='")
    decoded = decode_saslname(authzid[2:]) if authzid else ""
    return Gs2Header(text=message[: end + 1], authzid=decoded), message[end + 1 :]


def decode_saslname(value: str) -> str:
    """RFC 5802's saslname: ``=2C`` stands for ``,`` and ``=3D`` for ``=``; any other ``=``
    (and NUL) is malformed."""
    if not value:
        raise SaslSyntaxError("empty name")
    if "\x00" in value or "," in value:
        raise SaslSyntaxError("a name holds NUL or ','")
    parts = value.split("=")
    decoded = [parts[0]]
    for part in parts[1:]:
        escape = part[:2]
        if escape == "2C":
            decoded.append("," + part[2:])
        elif escape == "3D":
            decoded.append("=" + part[2:])
        else:
            raise SaslSyntaxError("a name holds '=' that is not the escape =2C or =3D")
    return "".join(decoded)
