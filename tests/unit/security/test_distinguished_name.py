"""Certificate subjects become the RFC 2253 names Java's ``X500Principal.getName()`` prints
(every expectation here was compared with Java 17's output for the same certificate)."""

from __future__ import annotations

import pytest

from odradek.broker.security.distinguished_name import Subject, rfc2253_name


def subject(*rdns: tuple[tuple[str, str], ...]) -> Subject:
    return rdns


def single(name: str, value: str) -> tuple[tuple[str, str], ...]:
    return ((name, value),)


@pytest.mark.parametrize(
    ("peer_subject", "name"),
    [
        pytest.param(
            subject(
                single("countryName", "US"),
                single("organizationName", "acme"),
                single("organizationalUnitName", "eng"),
                single("commonName", "alice"),
            ),
            "CN=alice,OU=eng,O=acme,C=US",
            id="most specific first",
        ),
        pytest.param(
            subject(
                single("domainComponent", "com"),
                single("domainComponent", "example"),
                single("userId", "u1"),
                single("streetAddress", "1 Main St"),
                single("stateOrProvinceName", "MD"),
                single("localityName", "Fulton"),
            ),
            "L=Fulton,ST=MD,STREET=1 Main St,UID=u1,DC=example,DC=com",
            id="every RFC 2253 keyword",
        ),
        pytest.param(
            subject(single("commonName", "Tkac, Adam")), "CN=Tkac\\, Adam", id="comma escaped"
        ),
        pytest.param(
            subject(single("localityName", 'a=b+c<d>e#f;g"h\\i')),
            'L=a\\=b\\+c\\<d\\>e\\#f\\;g\\"h\\\\i',
            id="specials escaped, = and # too",
        ),
        pytest.param(
            subject(single("commonName", "  spaced  ")),
            "CN=\\ \\ spaced\\ \\ ",
            id="spaces at the ends escaped",
        ),
        pytest.param(subject(single("commonName", "   ")), "CN=\\ \\ \\ ", id="only spaces"),
        pytest.param(subject(single("commonName", "trailing\r")), "CN=trailing\\\r", id="end CR"),
        pytest.param(subject(single("commonName", "nul\0in")), "CN=nul\\00in", id="NUL as \\00"),
        pytest.param(
            subject(single("commonName", "Zoë @ café_*&")),
            "CN=Zoë @ café_*&",
            id="other characters as they are",
        ),
        pytest.param(
            subject(
                single("organizationName", "acme"),
                (("commonName", "alice"), ("userId", "a1")),
            ),
            "CN=alice+UID=a1,O=acme",
            id="multi-valued RDN",
        ),
        pytest.param(
            subject(single("commonName", "bob"), single("emailAddress", "bob@example.com")),
            "1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d,CN=bob",
            id="emailAddress as OID and IA5String",
        ),
        pytest.param(
            subject(
                single("serialNumber", "1234"), single("title", "Dr"), single("dnQualifier", "q1")
            ),
            "2.5.4.46=#13027131,2.5.4.12=#0c024472,2.5.4.5=#130431323334",
            id="other attributes as OID and DER",
        ),
        pytest.param(
            subject(single("1.2.3.4.5", "custom")),
            "1.2.3.4.5=#0c06637573746f6d",
            id="an OID OpenSSL has no name for",
        ),
        pytest.param(
            subject(single("pseudonym", "z" * 130)),
            "2.5.4.65=#0c8182" + "7a" * 130,
            id="long DER length",
        ),
    ],
)
def test_rfc2253_name(peer_subject: Subject, name: str) -> None:
    assert rfc2253_name(peer_subject) == name
