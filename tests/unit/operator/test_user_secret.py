"""The Secret a User's clients read."""

from __future__ import annotations

import base64

from odradek.operator.builders.meta import Owner
from odradek.operator.builders.user_secret import (
    Credential,
    Endpoint,
    jaas_config,
    user_secret,
)

OWNER = Owner("User", "app", "prod", "uid-1")


def decoded(secret: dict[str, object]) -> dict[str, bytes]:
    data = secret["data"]
    assert isinstance(data, dict)
    return {key: base64.b64decode(value) for key, value in data.items()}


def test_a_scram_users_secret_has_what_a_client_needs_over_sasl_ssl() -> None:
    endpoint = Endpoint("events-bootstrap.prod.svc:9092", "SASL_SSL", "SCRAM-SHA-512", b"CA PEM")
    secret = user_secret(OWNER, endpoint, Credential("SCRAM-SHA-512", password="pw"))
    assert secret["metadata"]["name"] == "app"
    assert secret["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert decoded(secret) == {
        "bootstrap.servers": b"events-bootstrap.prod.svc:9092",
        "security.protocol": b"SASL_SSL",
        "ca.crt": b"CA PEM",
        "username": b"app",
        "password": b"pw",
        "sasl.mechanism": b"SCRAM-SHA-512",
        "sasl.jaas.config": b"org.apache.kafka.common.security.scram.ScramLoginModule required"
        b' username="app" password="pw";',
    }


def test_a_tls_users_secret_has_its_key_and_certificate() -> None:
    endpoint = Endpoint("events-bootstrap.prod.svc:9093", "SSL", None, b"CA PEM")
    secret = user_secret(OWNER, endpoint, Credential(key_pem=b"KEY", cert_pem=b"CERT"))
    assert decoded(secret) == {
        "bootstrap.servers": b"events-bootstrap.prod.svc:9093",
        "security.protocol": b"SSL",
        "ca.crt": b"CA PEM",
        "user.key": b"KEY",
        "user.crt": b"CERT",
    }


def test_a_scram_users_secret_for_a_plain_listener_logs_in_with_plain() -> None:
    endpoint = Endpoint("events-bootstrap.prod.svc:9094", "SASL_SSL", "PLAIN", b"CA PEM")
    secret = decoded(user_secret(OWNER, endpoint, Credential("SCRAM-SHA-512", password="pw")))
    assert secret["sasl.mechanism"] == b"PLAIN"
    assert secret["sasl.jaas.config"] == (
        b"org.apache.kafka.common.security.plain.PlainLoginModule required"
        b' username="app" password="pw";'
    )


def test_the_jaas_config_escapes_quotes_and_backslashes() -> None:
    assert jaas_config("PLAIN", "app", 'a"b\\c').endswith(' password="a\\"b\\\\c";')


def test_a_credential_never_shows_its_secret_in_a_repr() -> None:
    text = repr(Credential("SCRAM-SHA-512", password="hunter2", key_pem=b"KEY"))
    assert "hunter2" not in text and "KEY" not in text
