"""When the operator issues a certificate anew, and why: there is none, it is for other
names, another CA signed it, or it expires within the renewal window."""

from __future__ import annotations

import datetime
from collections.abc import Sequence

from cryptography import x509


def renewal_reason(
    cert_pem: bytes | None,
    ca: x509.Certificate,
    dns_names: Sequence[str],
    now: datetime.datetime,
    renew_before: datetime.timedelta,
) -> str | None:
    """Why the certificate in ``cert_pem`` must be issued again; None if it may stay."""
    if not cert_pem:
        return "no certificate yet"
    try:
        certificate = x509.load_pem_x509_certificate(cert_pem)
    except ValueError:
        return "the certificate cannot be read"
    if certificate.issuer != ca.subject or _key_id(certificate) != _subject_key_id(ca):
        return "another CA signed it"
    if sorted(_dns_names(certificate)) != sorted(dns_names):
        return "its names changed"
    expires = certificate.not_valid_after_utc
    if now >= expires - renew_before:
        return f"it expires at {expires:%Y-%m-%dT%H:%M:%SZ}, within the renewal window"
    return None


def _dns_names(certificate: x509.Certificate) -> list[str]:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    return list(extension.value.get_values_for_type(x509.DNSName))


def _key_id(certificate: x509.Certificate) -> bytes | None:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    except x509.ExtensionNotFound:
        return None
    return extension.value.key_identifier


def _subject_key_id(ca: x509.Certificate) -> bytes | None:
    try:
        return ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        return None
