"""The Secret a User's clients read: the credential and every setting needed to connect,
named as Kafka's clients name them."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..constants import CA_CERT_KEY
from .meta import Obj, Owner, metadata

USERNAME_KEY, PASSWORD_KEY = "username", "password"
USER_CERT_KEY, USER_KEY_KEY = "user.crt", "user.key"
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@dataclass(frozen=True)
class Endpoint:
    """The listener a User connects to."""

    bootstrap_servers: str
    security_protocol: str
    sasl_mechanism: str | None
    """What the listener asks a password for: a SCRAM mechanism, or PLAIN."""
    ca_pem: bytes | None
    """The CAs that sign the brokers' certificates, when the listener serves TLS."""


@dataclass(frozen=True)
class Credential:
    """A SCRAM password (with the mechanism it is stored for), or a client key and
    certificate."""

    mechanism: str | None = None
    password: str | None = field(default=None, repr=False)
    key_pem: bytes | None = field(default=None, repr=False)
    cert_pem: bytes | None = None


def user_secret(owner: Owner, endpoint: Endpoint, credential: Credential) -> Obj:
    """The Secret named after the User, owned by it (gone when the User is)."""
    data: dict[str, bytes] = {
        "bootstrap.servers": endpoint.bootstrap_servers.encode(),
        "security.protocol": endpoint.security_protocol.encode(),
    }
    if endpoint.ca_pem is not None:
        data[CA_CERT_KEY] = endpoint.ca_pem
    if credential.password is not None:
        mechanism = endpoint.sasl_mechanism
        assert mechanism is not None
        data |= {
            USERNAME_KEY: owner.name.encode(),
            PASSWORD_KEY: credential.password.encode(),
            "sasl.mechanism": mechanism.encode(),
            "sasl.jaas.config": jaas_config(mechanism, owner.name, credential.password).encode(),
        }
    if credential.key_pem is not None and credential.cert_pem is not None:
        data |= {USER_KEY_KEY: credential.key_pem, USER_CERT_KEY: credential.cert_pem}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(owner, owner.name, "user"),
        "type": "Opaque",
        "data": _encoded(data),
    }


def jaas_config(mechanism: str, user: str, password: str) -> str:
    """The Java clients' ``sasl.jaas.config`` for SCRAM or PLAIN (quotes and backslashes
    escaped)."""
    login_module = LOGIN_MODULES[mechanism]
    return f'{login_module} required username="{_quoted(user)}" password="{_quoted(password)}";'


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _encoded(data: Mapping[str, bytes]) -> dict[str, str]:
    return {key: base64.b64encode(value).decode() for key, value in data.items()}
