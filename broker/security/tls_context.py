"""TLS for a listener as Kafka configures it: a key store and a trust store, PEM or PKCS12,
from files or inline PEM; ``ssl.client.auth``; TLS 1.2 and 1.3 only. The listening context
hands every new handshake the newest context built from the files, so certificates that
Kubernetes rotates in place are picked up without a restart or a dropped connection."""

from __future__ import annotations

import datetime
import logging
import os
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

log = logging.getLogger(__name__)

_PROTOCOLS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}
_STORE_TYPES = ("PEM", "PKCS12")


class TlsConfigError(ValueError):
    """A TLS setting that cannot be used; the message names the key, never a secret."""


@dataclass(frozen=True)
class TlsSettings:
    """The ``ssl.*`` keys of one listener (or of the inter-broker client side)."""

    keystore_type: str = "PEM"
    keystore_location: str | None = None
    keystore_password: str | None = None
    key_password: str | None = None
    keystore_certificate_chain: str | None = None
    keystore_key: str | None = None
    truststore_type: str = "PEM"
    truststore_location: str | None = None
    truststore_password: str | None = None
    truststore_certificates: str | None = None
    client_auth: str = "none"
    enabled_protocols: tuple[str, ...] = ("TLSv1.2", "TLSv1.3")

    def __repr__(self) -> str:  # the passwords and inline key stay out of logs
        return (
            f"TlsSettings(keystore={self.keystore_location}, truststore={self.truststore_location})"
        )

    @classmethod
    def from_config(cls, get: Callable[[str], str | None]) -> TlsSettings:
        """From Kafka's key names; ``get`` resolves a key (with any listener prefix)."""
        protocols = get("ssl.enabled.protocols") or "TLSv1.2,TLSv1.3"
        return cls(
            keystore_type=(get("ssl.keystore.type") or "PEM").upper(),
            keystore_location=get("ssl.keystore.location"),
            keystore_password=get("ssl.keystore.password"),
            key_password=get("ssl.key.password"),
            keystore_certificate_chain=get("ssl.keystore.certificate.chain"),
            keystore_key=get("ssl.keystore.key"),
            truststore_type=(get("ssl.truststore.type") or "PEM").upper(),
            truststore_location=get("ssl.truststore.location"),
            truststore_password=get("ssl.truststore.password"),
            truststore_certificates=get("ssl.truststore.certificates"),
            client_auth=(get("ssl.client.auth") or "none").lower(),
            enabled_protocols=tuple(p.strip() for p in protocols.split(",") if p.strip()),
        )

    @property
    def watched_files(self) -> tuple[Path, ...]:
        """The files a reload looks at."""
        files = (self.keystore_location, self.truststore_location)
        return tuple(Path(name) for name in files if name)


def server_context(settings: TlsSettings) -> ssl.SSLContext:
    """A server context; TlsConfigError if the stores cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _restrict_protocols(context, settings.enabled_protocols)
    verify = _CLIENT_AUTH.get(settings.client_auth)
    if verify is None:
        raise TlsConfigError(
            f"ssl.client.auth: {settings.client_auth!r} is not none, requested or required"
        )
    _load_key_store(context, settings)
    context.verify_mode = verify
    if verify != ssl.CERT_NONE:
        _load_trust_store(context, settings)
    return context


def client_context(settings: TlsSettings, check_hostname: bool) -> ssl.SSLContext:
    """A client context (brokers reaching each other): the trust store, and the key store
    when there is one (mutual TLS)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _restrict_protocols(context, settings.enabled_protocols)
    context.check_hostname = check_hostname
    _load_trust_store(context, settings)
    if settings.keystore_location or settings.keystore_certificate_chain:
        _load_key_store(context, settings)
    return context


class _WatchedContext:
    """The newest context built from the settings' files: ``reload`` builds a new one when
    a watched file changed, keeping the old one if the new files are unusable (half-written
    during a rotation, say)."""

    def __init__(self, settings: TlsSettings, build: Callable[[TlsSettings], ssl.SSLContext]):
        self._settings = settings
        self._build = build
        self._current = build(settings)
        self._fingerprint = _fingerprint(settings.watched_files)
        self.expires_at = key_store_expiry(settings)
        """When the certificate it presents expires (None without a key store)."""

    def reload(self) -> bool:
        """Rebuild if a watched file changed; True when the newest context changed."""
        fingerprint = _fingerprint(self._settings.watched_files)
        if fingerprint == self._fingerprint:
            return False
        try:
            fresh = self._build(self._settings)
        except (TlsConfigError, OSError, ssl.SSLError) as error:
            log.warning("TLS files changed but cannot be loaded yet, keeping the old: %s", error)
            return False
        self._current, self._fingerprint = fresh, fingerprint
        self.expires_at = key_store_expiry(self._settings)
        log.info(
            "TLS certificates reloaded from %s", ", ".join(map(str, self._settings.watched_files))
        )
        return True


class ReloadingServerContext(_WatchedContext):
    """The context a listener serves with. Each handshake switches to the newest context
    (through the SNI callback, which runs before the certificate is chosen)."""

    def __init__(self, settings: TlsSettings) -> None:
        super().__init__(settings, server_context)
        self.context = self._current  # the listener's for good; it hands over to newer ones
        self.context.sni_callback = self._switch

    def _switch(
        self, connection: ssl.SSLObject | ssl.SSLSocket, _: str | None, __: ssl.SSLContext
    ) -> None:
        connection.context = self._current


class ReloadingClientContext(_WatchedContext):
    """The context a broker connects to another with; a connection opened after its key or
    trust store changed on disk uses the new files (a stat per connection, no timer)."""

    def __init__(self, settings: TlsSettings, check_hostname: bool) -> None:
        super().__init__(settings, lambda s: client_context(s, check_hostname))

    def current(self) -> ssl.SSLContext:
        self.reload()
        return self._current


def _restrict_protocols(context: ssl.SSLContext, enabled: tuple[str, ...]) -> None:
    versions = []
    for name in enabled:
        version = _PROTOCOLS.get(name)
        if version is None:
            raise TlsConfigError(
                f"ssl.enabled.protocols: {name} is not allowed; TLSv1.2 and TLSv1.3 are"
            )
        versions.append(version)
    if not versions:
        raise TlsConfigError("ssl.enabled.protocols: no protocol enabled")
    context.minimum_version, context.maximum_version = min(versions), max(versions)


def key_store_expiry(settings: TlsSettings) -> datetime.datetime | None:
    """When the key store's own certificate (the first of its chain) expires; None without
    a key store, or when it cannot be read now."""
    if not (settings.keystore_location or settings.keystore_certificate_chain):
        return None
    try:
        pem, _ = _key_store_pem(settings)
        return x509.load_pem_x509_certificates(pem)[0].not_valid_after_utc
    except (TlsConfigError, OSError, ValueError):
        return None


def _load_key_store(context: ssl.SSLContext, settings: TlsSettings) -> None:
    pem, password = _key_store_pem(settings)
    _load_pem_chain(context, pem, password)


def _key_store_pem(settings: TlsSettings) -> tuple[bytes, str | None]:
    """The key store as PEM (key and certificate chain), and the key's password."""
    if settings.keystore_type not in _STORE_TYPES:
        raise TlsConfigError(
            f"ssl.keystore.type: {settings.keystore_type} is not supported; use PEM or PKCS12"
        )
    if settings.keystore_certificate_chain or settings.keystore_key:
        if settings.keystore_type != "PEM" or not (
            settings.keystore_certificate_chain and settings.keystore_key
        ):
            raise TlsConfigError(
                "ssl.keystore.certificate.chain and ssl.keystore.key go together, with"
                " ssl.keystore.type=PEM"
            )
        pem = settings.keystore_key + "\n" + settings.keystore_certificate_chain
        return pem.encode(), settings.key_password
    if not settings.keystore_location:
        raise TlsConfigError("ssl.keystore.location: a TLS listener needs a key store")
    data = _read("ssl.keystore.location", settings.keystore_location)
    if settings.keystore_type == "PKCS12":
        return _pkcs12_as_pem(data, settings.keystore_password, "ssl.keystore.location"), None
    return data, settings.key_password or settings.keystore_password


def _load_trust_store(context: ssl.SSLContext, settings: TlsSettings) -> None:
    if settings.truststore_certificates:
        context.load_verify_locations(cadata=settings.truststore_certificates)
    elif settings.truststore_location:
        data = _read("ssl.truststore.location", settings.truststore_location)
        if settings.truststore_type == "PKCS12":
            certificates = pkcs12.load_pkcs12(
                data, _password(settings.truststore_password)
            ).additional_certs
            data = b"".join(
                c.certificate.public_bytes(serialization.Encoding.PEM) for c in certificates
            )
        elif settings.truststore_type != "PEM":
            raise TlsConfigError(
                f"ssl.truststore.type: {settings.truststore_type} is not supported; use PEM"
                " or PKCS12"
            )
        try:
            context.load_verify_locations(cadata=data.decode())
        except ssl.SSLError as error:
            raise TlsConfigError(
                f"ssl.truststore.location: no certificate found ({error})"
            ) from None
    else:
        context.load_default_certs(ssl.Purpose.CLIENT_AUTH)


def _load_pem_chain(context: ssl.SSLContext, pem: bytes, password: str | None) -> None:
    """``load_cert_chain`` reads only files: the PEM goes through a private temporary file."""
    with tempfile.NamedTemporaryFile(prefix="odradek-keystore-") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(pem)
        handle.flush()
        try:
            context.load_cert_chain(handle.name, password=password or None)
        except ssl.SSLError as error:
            raise TlsConfigError(
                f"ssl.keystore: the key store holds no usable key and certificate ({error.reason})"
            ) from None


def _pkcs12_as_pem(data: bytes, password: str | None, key: str) -> bytes:
    try:
        store = pkcs12.load_pkcs12(data, _password(password))
    except ValueError:
        raise TlsConfigError(f"{key}: not a PKCS12 store, or a wrong password") from None
    if store.key is None or store.cert is None:
        raise TlsConfigError(f"{key}: the PKCS12 store holds no key and certificate")
    key_pem = store.key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    chain = [store.cert.certificate, *(c.certificate for c in store.additional_certs)]
    return key_pem + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)


def _password(password: str | None) -> bytes | None:
    return password.encode() if password else None


def _read(key: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as error:
        raise TlsConfigError(f"{key}: {location}: {error.strerror}") from None


def _fingerprint(files: tuple[Path, ...]) -> tuple[tuple[int, int, int], ...]:
    """What changes when a file is rewritten or its Secret's symlink is swapped."""
    stats = []
    for path in files:
        try:
            found = path.stat()
        except OSError:
            stats.append((0, 0, 0))
            continue
        stats.append((found.st_ino, found.st_mtime_ns, found.st_size))
    return tuple(stats)
