"""When the operator issues a certificate anew, and why (there is none, it is for other
names, another CA signed it, or it expires within the renewal window), and when it renews
a cluster's CA."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

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
    if expires >= ca.not_valid_after_utc:
        return None  # as long as its CA: a new one could last no longer
    if now >= expires - renew_before:
        return f"it expires at {expires:%Y-%m-%dT%H:%M:%SZ}, within the renewal window"
    return None


def _dns_names(certificate: x509.Certificate) -> list[str]:
    """The names a certificate is valid for: DNS names and IP addresses, as text."""
    try:
        extension = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return []
    addresses = extension.value.get_values_for_type(x509.IPAddress)
    return [*extension.value.get_values_for_type(x509.DNSName), *map(str, addresses)]


def _key_id(certificate: x509.Certificate) -> bytes | None:
    try:
        extension = certificate.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    except x509.ExtensionNotFound:
        return None
    return extension.value.key_identifier


def _subject_key_id(ca: x509.Certificate) -> bytes:
    """The CA's key identifier: its extension's, or (a CA a user brought may lack one) the
    one its certificates' authority key identifier is made from."""
    try:
        return ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    except x509.ExtensionNotFound:
        return x509.SubjectKeyIdentifier.from_public_key(ca.public_key()).digest  # type: ignore[arg-type]


@dataclass(frozen=True)
class CaPlan:
    """What to do with a cluster's CA on this pass.

    A CA is renewed ``renew_before`` ahead of its expiry; the old one stays trusted (in
    every ``ca.crt``) until it expires. Certificates go on being signed by the old CA for
    the first half of that window, so clients that reread the trusted CAs within it never
    meet a certificate they do not trust; then they are issued again by the new one."""

    renew: str | None
    """Why a new CA is made now; None: keep the current one."""
    drop_previous: bool
    """The previous CA has expired: forget it."""
    sign_with_previous: bool
    """Certificates are still signed by the previous CA."""
    leaf_renew_before: datetime.timedelta
    """How long before its expiry a certificate is issued again."""


def plan_ca(
    current: x509.Certificate | None,
    previous: x509.Certificate | None,
    now: datetime.datetime,
    renew_before: datetime.timedelta,
) -> CaPlan:
    if current is None:
        return CaPlan("no CA yet", previous is not None, False, renew_before)
    expires = current.not_valid_after_utc
    if now >= expires - renew_before:
        # the current CA becomes the previous one; an older one is forgotten. It signs on
        # only if it has half the window left (not when it expired while no pass ran)
        reason = f"it expires at {expires:%Y-%m-%dT%H:%M:%SZ}, within the renewal window"
        if now < expires - renew_before / 2:
            return CaPlan(reason, previous is not None, True, renew_before / 2)
        return CaPlan(reason, previous is not None, False, renew_before)
    if previous is None or now >= previous.not_valid_after_utc:
        return CaPlan(None, previous is not None, False, renew_before)
    switch = previous.not_valid_after_utc - renew_before / 2
    if now < switch:
        return CaPlan(None, False, True, renew_before / 2)
    return CaPlan(None, False, False, renew_before)
