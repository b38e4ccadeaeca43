"""Real X.509 material for TLS tests: a CA and certificates it signs (EC keys: fast)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Issued:
    key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    @property
    def cert_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def write_pem(self, path: Path) -> Path:
        """Key and certificate in one PEM file, as ssl.keystore.type=PEM reads it."""
        path.write_bytes(self.key_pem + self.cert_pem)
        return path

    def write_pkcs12(self, path: Path, password: str) -> Path:
        data = pkcs12.serialize_key_and_certificates(
            b"odradek", self.key, self.certificate, None,
            serialization.BestAvailableEncryption(password.encode()),
        )  # fmt: skip
        path.write_bytes(data)
        return path


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "odradek-tests"),
        ]
    )


def certificate_authority(common_name: str = "test-ca") -> Issued:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return Issued(key, certificate)


def issue(
    ca: Issued,
    common_name: str,
    hosts: tuple[str, ...] = ("127.0.0.1", "localhost"),
    valid_for: datetime.timedelta = datetime.timedelta(days=1),
) -> Issued:
    """A leaf certificate for ``common_name`` whose SANs are ``hosts`` (IPs or DNS names)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(min(now - datetime.timedelta(minutes=5), now + valid_for))
        .not_valid_after(now + valid_for)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    return Issued(key, certificate)
