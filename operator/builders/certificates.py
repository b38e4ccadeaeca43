"""Certificates the operator issues for a Cluster, as PEM: the cluster CA, each broker's
server-and-client certificate (its DNS names: the pod's under the headless Service, and
the bootstrap Service's) and the operator's own client certificate. EC P-256 keys: fast
to make, and every Kafka client speaks them."""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from . import names

ORGANIZATION = "odradek"
_CA_KEY_USAGE = x509.KeyUsage(
    digital_signature=False,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    key_cert_sign=True,
    crl_sign=True,
    encipher_only=False,
    decipher_only=False,
)
BACKDATE = datetime.timedelta(minutes=5)
"""Certificates are valid from a little before they are made: clocks differ."""


@dataclass(frozen=True)
class KeyPair:
    """A private key and its certificate, PEM encoded."""

    key_pem: bytes
    cert_pem: bytes

    @property
    def certificate(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.cert_pem)


def subject(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def new_ca(common_name: str, valid_for: datetime.timedelta, now: datetime.datetime) -> KeyPair:
    """A self-signed CA that signs leaf certificates only."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = subject(common_name)
    certificate = (
        _builder(name, name, key.public_key(), valid_for, now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_CA_KEY_USAGE, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return _pair(key, certificate)


def issue(
    ca: KeyPair,
    common_name: str,
    dns_names: Sequence[str],
    valid_for: datetime.timedelta,
    now: datetime.datetime,
) -> KeyPair:
    """A leaf certificate signed by ``ca`` (an EC or RSA key: the operator's, or one a user
    brings) for TLS servers and clients alike (a broker is both: replication connects
    with it), valid for ``dns_names`` (DNS names and IP addresses)."""
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError(f"a CA key must be EC or RSA, not {type(ca_key).__name__}")
    ca_cert = ca.certificate
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        _builder(subject(common_name), ca_cert.subject, key.public_key(), valid_for, now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if dns_names:
        san = x509.SubjectAlternativeName([_general_name(n) for n in dns_names])
        builder = builder.add_extension(san, critical=False)
    return _pair(key, builder.sign(ca_key, hashes.SHA256()))


def _general_name(name: str) -> x509.GeneralName:
    """An IP address as such, anything else as a DNS name."""
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def broker_dns_names(cluster: str, namespace: str, broker_id: int) -> list[str]:
    """The names a broker is reached by: its own (advertised) and the bootstrap Service's,
    fully qualified and as short as a client in the namespace may use them."""
    pod = f"{names.broker_pod(cluster, broker_id)}.{names.headless(cluster)}"
    bootstrap = names.bootstrap(cluster)
    return [
        f"{pod}.{namespace}.svc",
        f"{pod}.{namespace}.svc.cluster.local",
        f"{pod}.{namespace}",
        f"{bootstrap}.{namespace}.svc",
        f"{bootstrap}.{namespace}.svc.cluster.local",
        f"{bootstrap}.{namespace}",
        bootstrap,
    ]


def _builder(
    name: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    valid_for: datetime.timedelta,
    now: datetime.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + valid_for)
    )


def _pair(key: ec.EllipticCurvePrivateKey, certificate: x509.Certificate) -> KeyPair:
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return KeyPair(key_pem, certificate.public_bytes(serialization.Encoding.PEM))
