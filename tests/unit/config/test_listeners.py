"""Kafka's named listeners as Kafka parses and checks them."""

from __future__ import annotations

import socket

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import DEFAULT_PROTOCOL_MAP, ConfigError
from odradek.broker.config.listeners import (
    Listener,
    SecurityProtocol,
    advertised,
    inter_broker_listener,
    parse_listeners,
    parse_protocol_map,
)

PROTOCOLS = parse_protocol_map(DEFAULT_PROTOCOL_MAP + ",INTERNAL:SASL_SSL,CLIENTS:SSL")


def test_listeners_are_named_and_take_their_protocol_from_the_map() -> None:
    parsed = parse_listeners(
        "listeners",
        "PLAINTEXT://127.0.0.1:9092, internal://10.0.0.1:9093,CLIENTS://:9094",
        PROTOCOLS,
    )
    assert parsed == [
        Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092),
        Listener("INTERNAL", SecurityProtocol.SASL_SSL, "10.0.0.1", 9093),
        Listener("CLIENTS", SecurityProtocol.SSL, "", 9094),
    ]
    assert parsed[2].bind_host == "0.0.0.0"
    assert parsed[1].config_prefix == "listener.name.internal."
    assert parsed[1].security_protocol.uses_sasl and parsed[1].security_protocol.uses_tls


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("127.0.0.1:9092", "is not NAME://host:port"),
        ("PLAINTEXT://127.0.0.1", "is not NAME://host:port"),
        ("OTHER://127.0.0.1:9092", "listener OTHER has no security protocol"),
        ("SSL://a:1,SSL://b:2", "listener SSL is named twice"),
        ("", "no listener given"),
    ],
)
def test_bad_listeners_are_refused_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        parse_listeners("listeners", text, PROTOCOLS)
    assert str(refused.value).startswith("listeners: ")


def test_a_protocol_map_entry_must_name_a_known_protocol() -> None:
    with pytest.raises(ConfigError, match="'TLS' is not one of PLAINTEXT, SSL"):
        parse_protocol_map("CLIENTS:TLS")
    with pytest.raises(ConfigError, match="is not NAME:PROTOCOL"):
        parse_protocol_map("CLIENTS")


def test_advertised_listeners_default_to_the_bound_ones_and_must_be_bound() -> None:
    bound = parse_listeners("listeners", "PLAINTEXT://127.0.0.1:9092,SSL://:9093", PROTOCOLS)
    assert [(item.name, item.host) for item in advertised(bound, None, PROTOCOLS)] == [
        ("PLAINTEXT", "127.0.0.1"),
        ("SSL", socket.getfqdn()),
    ]
    chosen = advertised(bound, "SSL://broker-0.example:9093", PROTOCOLS)
    assert chosen == [Listener("SSL", SecurityProtocol.SSL, "broker-0.example", 9093)]
    with pytest.raises(ConfigError, match="listener SASL_SSL is not in listeners"):
        advertised(bound, "SASL_SSL://broker-0.example:9094", PROTOCOLS)
    wildcard = parse_listeners("listeners", "PLAINTEXT://0.0.0.0:9092", PROTOCOLS)
    with pytest.raises(ConfigError, match=r"set advertised\.listeners"):
        advertised(wildcard, None, PROTOCOLS)


def test_the_inter_broker_listener_is_named_or_found_by_protocol() -> None:
    listeners = parse_listeners("listeners", "INTERNAL://a:1,CLIENTS://a:2", PROTOCOLS)
    assert inter_broker_listener(listeners, "internal", None).name == "INTERNAL"
    assert inter_broker_listener(listeners, None, "SSL").name == "CLIENTS"
    with pytest.raises(ConfigError, match="no advertised listener uses PLAINTEXT"):
        inter_broker_listener(listeners, None, None)
    with pytest.raises(ConfigError, match="both set"):
        inter_broker_listener(listeners, "INTERNAL", "SSL")
    with pytest.raises(ConfigError, match="REPLICATION is not one of the advertised"):
        inter_broker_listener(listeners, "REPLICATION", None)


def test_per_listener_and_per_mechanism_keys_are_accepted_where_kafka_takes_them() -> None:
    config = BrokerConfig.load(
        environ={},
        overrides={
            "listeners": "INTERNAL://127.0.0.1:9093",
            "listener.security.protocol.map": "INTERNAL:SASL_PLAINTEXT",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.oauthbearer.token.endpoint.url": "file:///run/broker.jwt",
            "listener.name.internal.oauthbearer.sasl.oauthbearer.token.endpoint.url": (
                "file:///run/internal.jwt"
            ),
            "listener.name.internal.sasl.server.callback.handler.class": (
                "org.apache.kafka.common.security.oauthbearer.secured."
                "OAuthBearerValidatorCallbackHandler"
            ),
        },
    )
    internal = config.listeners[0]
    url = "sasl.oauthbearer.token.endpoint.url"
    assert config.mechanism_str(internal, "OAUTHBEARER", url) == "file:///run/internal.jwt"
    assert config.mechanism_str(internal, "PLAIN", url) == "file:///run/broker.jwt"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        # the JWKS is the listener's: no mechanism of it has its own
        (
            "listener.name.internal.oauthbearer.sasl.oauthbearer.jwks.endpoint.url",
            "file:///k",
            "unknown configuration key",
        ),
        ("sasl.oauthbearer.token.endpoint.url", "https://idp/token", "is not a file URL"),
        ("sasl.login.callback.handler.class", "com.example.Login", "is not one of"),
    ],
)
def test_per_mechanism_keys_kafka_configs_use_are_checked(
    key: str, value: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        BrokerConfig.load(environ={}, overrides={key: value})
