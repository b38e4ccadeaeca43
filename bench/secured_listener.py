"""The security of the clients' listener in a benchmark run, in one place for both systems.

Odradek takes Kafka's names for listeners, TLS and SASL, so one set of broker
settings serves both: a listener named after its protocol (``SSL`` or
``SASL_SSL``) for the clients, a ``PLAINTEXT`` one beside it for inter-broker
traffic, a PEM key store (an EC P-256 key and its certificate for 127.0.0.1,
signed by a CA made for the run) and, for SASL_SSL, PLAIN with one user from
Kafka's JAAS syntax. The mechanism only matters when a client connects, which
happens before a phase is timed. The same object gives librdkafka's and the
Java client's settings for that listener.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_SSL")
HOST = "127.0.0.1"
USER, PASSWORD = "bench", "bench-secret"
PLAIN_LOGIN = "org.apache.kafka.common.security.plain.PlainLoginModule required"


@dataclass(frozen=True)
class ListenerSecurity:
    """``protocol`` of the clients' listener; ``directory`` holds ``ca.pem`` and
    ``broker.pem`` (key and certificate) when it is TLS."""

    protocol: str = "PLAINTEXT"
    directory: Path = Path()

    @property
    def tls(self) -> bool:
        return self.protocol != "PLAINTEXT"

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def ca_file(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def key_store(self) -> Path:
        return self.directory / "broker.pem"

    def listeners(self, port: int, inter_broker_port: int) -> list[str]:
        """The clients' listener on ``port``; a PLAINTEXT one for brokers when it is secured."""
        clients = f"{self.protocol}://{HOST}:{port}"
        if not self.tls:
            return [clients]
        return [clients, f"PLAINTEXT://{HOST}:{inter_broker_port}"]

    def broker_settings(self) -> dict[str, str]:
        """The TLS and SASL settings, as Kafka names them, of a broker with these listeners."""
        settings: dict[str, str] = {}
        if self.tls:
            settings["ssl.keystore.type"] = "PEM"
            settings["ssl.keystore.location"] = str(self.key_store)
        if self.sasl:
            settings["sasl.enabled.mechanisms"] = "PLAIN"
            jaas = f'{PLAIN_LOGIN} user_{USER}="{PASSWORD}";'
            settings[f"listener.name.{self.protocol.lower()}.plain.sasl.jaas.config"] = jaas
        return settings

    def client_settings(self, bootstrap: str) -> dict[str, str]:
        """librdkafka's settings to reach the clients' listener at ``bootstrap``."""
        settings = {"bootstrap.servers": bootstrap, "security.protocol": self.protocol}
        if self.tls:
            settings["ssl.ca.location"] = str(self.ca_file)
        if self.sasl:
            settings |= {"sasl.mechanism": "PLAIN", "sasl.username": USER}
            settings["sasl.password"] = PASSWORD
        return settings

    def java_client_settings(self) -> dict[str, str]:
        """The same for Kafka's Java client (ProducerPerformance, ConsumerPerformance)."""
        settings = {"security.protocol": self.protocol}
        if self.tls:
            settings["ssl.truststore.type"] = "PEM"
            settings["ssl.truststore.location"] = str(self.ca_file)
        if self.sasl:
            settings["sasl.mechanism"] = "PLAIN"
            settings["sasl.jaas.config"] = f'{PLAIN_LOGIN} username="{USER}" password="{PASSWORD}";'
        return settings


PLAINTEXT = ListenerSecurity()


def listener_security(protocol: str, directory: Path) -> ListenerSecurity:
    """``protocol``'s security, with a new CA and broker key store in ``directory`` for TLS."""
    security = ListenerSecurity(protocol, directory)
    if security.tls:
        directory.mkdir(parents=True, exist_ok=True)
        ca_key, ca_certificate = _certificate("odradek-bench-ca", None)
        key, certificate = _certificate(HOST, (ca_key, ca_certificate))
        security.ca_file.write_bytes(_pem(ca_certificate))
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        security.key_store.write_bytes(key_pem + _pem(certificate))
    return security


def negotiated_tls(bootstrap: str, security: ListenerSecurity) -> str:
    """The TLS version and cipher suite the first broker in ``bootstrap`` agrees on with an
    OpenSSL client (Python's ssl; librdkafka uses OpenSSL with the same defaults)."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    context = ssl.create_default_context(cafile=security.ca_file)
    with (
        socket.create_connection((host, int(port)), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=host) as connection,
    ):
        cipher, version, _ = connection.cipher() or ("?", "?", 0)
    return f"{version} {cipher}"


def _certificate(
    name: str, issuer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate] | None
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A CA (no ``issuer``) or a certificate for ``name`` (an IP address) signed by ``issuer``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    signing_key, issuer_name = (key, subject) if issuer is None else (issuer[0], issuer[1].subject)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
    else:
        address = x509.IPAddress(ipaddress.ip_address(name))
        builder = builder.add_extension(x509.SubjectAlternativeName([address]), False)
    return key, builder.sign(signing_key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)
