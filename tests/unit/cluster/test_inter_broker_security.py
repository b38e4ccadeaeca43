"""What a broker logs in to other brokers and to etcd with, read from Kafka's settings, and
the settings it refuses at start."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from certificates import certificate_authority, issue

from odradek.broker.cluster.etcd_tls import etcd_tls
from odradek.broker.cluster.peer_security import inter_broker_security
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.security.sasl_client import (
    OAuthBearerClientExchange,
    PlainClientExchange,
    SaslClientError,
    ScramClientExchange,
)

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required"
    ' username="broker" password="broker-secret";'
)


@pytest.fixture
def stores(tmp_path: Path) -> dict[str, str]:
    ca = certificate_authority()
    (tmp_path / "ca.pem").write_bytes(ca.cert_pem)
    issue(ca, "broker").write_pem(tmp_path / "broker.pem")
    return {
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(tmp_path / "broker.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(tmp_path / "ca.pem"),
    }


def _config(**settings: str) -> BrokerConfig:
    return BrokerConfig.load(environ={}, overrides=settings)


def _sasl_ssl(stores: dict[str, str], **settings: str) -> BrokerConfig:
    return _config(
        **{
            "listeners": "INTERNAL://127.0.0.1:9093,CLIENTS://127.0.0.1:9092",
            "listener.security.protocol.map": "INTERNAL:SASL_SSL,CLIENTS:SSL",
            "inter.broker.listener.name": "INTERNAL",
            "listener.name.internal.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
            "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
            "listener.name.internal.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            **stores,
            **settings,
        }
    )


def test_a_plaintext_inter_broker_listener_needs_nothing() -> None:
    security = inter_broker_security(_config(listeners="PLAINTEXT://127.0.0.1:9092"))
    assert security.ssl_context() is None and security.sasl_exchange() is None


def test_sasl_ssl_uses_tls_with_the_brokers_certificate_and_the_jaas_login(
    stores: dict[str, str],
) -> None:
    security = inter_broker_security(_sasl_ssl(stores))
    context = security.ssl_context()
    assert context is not None and context.check_hostname
    assert context.verify_mode == ssl.CERT_REQUIRED
    exchange = security.sasl_exchange()
    assert isinstance(exchange, ScramClientExchange) and exchange.who == "broker"
    assert "broker-secret" not in repr(security)


def test_an_empty_endpoint_identification_algorithm_turns_host_name_checks_off(
    stores: dict[str, str],
) -> None:
    config = _sasl_ssl(stores, **{"ssl.endpoint.identification.algorithm": ""})
    context = inter_broker_security(config).ssl_context()
    assert context is not None and not context.check_hostname


def test_plain_takes_the_login_from_sasl_jaas_config(stores: dict[str, str]) -> None:
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
        ' username="broker" password="p" user_broker="p";'
    )
    config = _sasl_ssl(
        stores,
        **{
            "sasl.mechanism.inter.broker.protocol": "PLAIN",
            "listener.name.internal.sasl.jaas.config": jaas,
        },
    )
    assert isinstance(inter_broker_security(config).sasl_exchange(), PlainClientExchange)


def test_oauthbearer_logs_in_with_the_token_file_read_at_every_login(
    stores: dict[str, str], tmp_path: Path
) -> None:
    token = tmp_path / "token.jwt"
    token.write_text("header.claims.signature\n")
    config = _sasl_ssl(
        stores,
        **{
            "listener.name.internal.sasl.enabled.mechanisms": "OAUTHBEARER",
            "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
            "listener.name.internal.oauthbearer.sasl.oauthbearer.token.endpoint.url": (
                token.as_uri()
            ),
            "listener.name.internal.oauthbearer.sasl.login.callback.handler.class": (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
            ),
        },
    )
    security = inter_broker_security(config)
    exchange = security.sasl_exchange()
    assert isinstance(exchange, OAuthBearerClientExchange)
    assert exchange.first() == b"n,,\x01auth=Bearer header.claims.signature\x01\x01"
    assert exchange.step(b"") is None  # accepted
    token.write_text("rotated.claims.signature")
    again = security.sasl_exchange()
    assert again is not None and b"Bearer rotated.claims" in again.first()
    assert again.step(b'{"status":"invalid_token"}') == b"\x01"  # RFC 7628: acknowledge
    token.write_text("")
    with pytest.raises(SaslClientError, match="holds no token"):
        inter_broker_security(config).sasl_exchange().first()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {
                "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
                "listener.name.internal.sasl.enabled.mechanisms": "OAUTHBEARER",
            },
            r"listener\.name\.internal\.oauthbearer\.sasl\.oauthbearer\.token\.endpoint\.url:"
            " the inter-broker listener INTERNAL uses OAUTHBEARER",
        ),
        (
            {
                "sasl.mechanism.inter.broker.protocol": "OAUTHBEARER",
                "listener.name.internal.sasl.enabled.mechanisms": "OAUTHBEARER",
                "sasl.oauthbearer.token.endpoint.url": "file:///nonexistent/token.jwt",
            },
            "/nonexistent/token.jwt is not a file",
        ),
        (
            {"sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256"},
            "SCRAM-SHA-256 is not in sasl.enabled.mechanisms",
        ),
        (
            {"listener.name.internal.scram-sha-512.sasl.jaas.config": "x required;"},
            "names no username and password",
        ),
        ({"ssl.truststore.location": "/nonexistent/ca.pem"}, "ssl.truststore.location"),
        ({"ssl.endpoint.identification.algorithm": "ldap"}, "not https or empty"),
    ],
)
def test_what_cannot_work_between_brokers_is_refused_with_the_key_named(
    stores: dict[str, str], settings: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        inter_broker_security(_sasl_ssl(stores, **settings))


def test_a_missing_login_names_the_key_to_set(stores: dict[str, str]) -> None:
    config = _sasl_ssl(stores)
    del config.values["listener.name.internal.scram-sha-512.sasl.jaas.config"]
    with pytest.raises(ConfigError, match=r"listener\.name\.internal\.scram-sha-512\.sasl"):
        inter_broker_security(config)


def test_etcd_over_https_shows_the_client_certificate(stores: dict[str, str]) -> None:
    config = _config(
        **{
            "etcd.endpoints": "https://127.0.0.1:2379",
            "etcd.ssl.truststore.location": stores["ssl.truststore.location"],
            "etcd.ssl.keystore.location": stores["ssl.keystore.location"],
        }
    )
    tls = etcd_tls(config)
    assert tls is not None and tls.current().check_hostname


def test_plain_http_etcd_needs_no_tls() -> None:
    assert etcd_tls(_config(**{"etcd.endpoints": "http://127.0.0.1:2379"})) is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"etcd.endpoints": "http://127.0.0.1:2379", "etcd.ssl.truststore.location": "x"},
            "etcd.ssl.truststore.location: set, but etcd.endpoints are not https",
        ),
        (
            {"etcd.endpoints": "https://a:2379,http://b:2379"},
            "every endpoint as https",
        ),
        (
            {"etcd.endpoints": "https://a:2379", "etcd.ssl.keystore.location": "/nonexistent"},
            "etcd.ssl.keystore.location",
        ),
    ],
)
def test_etcd_tls_settings_that_cannot_work_are_refused(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        etcd_tls(_config(**settings))
