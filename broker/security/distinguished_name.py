"""A certificate subject as Kafka sees it: Java's ``X500Principal.getName()`` (RFC 2253).

Kafka maps the client certificate's subject with ``ssl.principal.mapping.rules`` in the
form Java prints, so rules written for Kafka need the same string here:

- the relative distinguished names in reverse order of the certificate's (``CN`` first),
  joined by ``,``; the attributes of a multi-valued one joined by ``+``;
- only the keywords RFC 2253 defines (CN, C, L, ST, O, OU, STREET, DC, UID); any other
  attribute is written as its dotted OID with ``#`` and the hex of its DER encoding;
- in a value, ``, = + < > # ; " \\`` are escaped with a backslash, NUL as ``\\00``, and
  spaces (and carriage returns) at either end with a backslash; nothing else is escaped.

Python's ``getpeercert()`` gives decoded strings, not the ASN.1 string type of an
attribute, so the DER of a non-keyword attribute is rebuilt with the type certificates use
for it: IA5String for emailAddress, PrintableString for serialNumber and dnQualifier when
they are printable, UTF8String otherwise.
"""

from __future__ import annotations

import re
import ssl

Subject = tuple[tuple[tuple[str, str], ...], ...]
"""``getpeercert()["subject"]``: relative distinguished names, each a tuple of
(attribute name, value) pairs, in the certificate's order."""

# OpenSSL's long names (as getpeercert() gives them) of the RFC 2253 keywords.
_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}
_ESCAPED = frozenset(',=+<>#;"\\')
_ENDS = " \r"
_IA5_STRING, _PRINTABLE_STRING, _UTF8_STRING = 0x16, 0x13, 0x0C
_PRINTABLE = re.compile(r"[A-Za-z0-9 '()+,\-./:=?]*")
_DOTTED_OID = re.compile(r"[0-9]+(\.[0-9]+)+")


def rfc2253_name(subject: Subject) -> str:
    return ",".join(
        "+".join(_attribute(name, value) for name, value in rdn) for rdn in reversed(subject)
    )


def _attribute(name: str, value: str) -> str:
    keyword = _KEYWORDS.get(name)
    if keyword is not None:
        return f"{keyword}={_escape(value)}"
    oid = name if _DOTTED_OID.fullmatch(name) else ssl._ASN1Object.fromname(name).oid
    return f"{oid}=#{_der_string(name, value).hex()}"


def _escape(value: str) -> str:
    escaped = "".join(
        "\\00" if char == "\0" else f"\\{char}" if char in _ESCAPED else char for char in value
    )
    start = len(escaped) - len(escaped.lstrip(_ENDS))
    end = start + len(escaped.strip(_ENDS))
    return "".join(
        char if start <= index < end else f"\\{char}" for index, char in enumerate(escaped)
    )


def _der_string(name: str, value: str) -> bytes:
    if name == "emailAddress" and value.isascii():
        tag = _IA5_STRING
    elif name in ("serialNumber", "dnQualifier") and _PRINTABLE.fullmatch(value):
        tag = _PRINTABLE_STRING
    else:
        tag = _UTF8_STRING
    content = value.encode()
    return bytes([tag]) + _der_length(len(content)) + content


def _der_length(length: int) -> bytes:
    if length < 0x80:
        return bytes([length])
    octets = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets
