"""How this broker reaches other brokers: the security protocol of the inter-broker
listener, from Kafka's settings. TLS uses the listener's trust store and the broker's own
key store as its client certificate (mutual TLS), checking the other broker's host name
unless ``ssl.endpoint.identification.algorithm`` is empty; SASL logs in with
``sasl.mechanism.inter.broker.protocol``: PLAIN and SCRAM with the username and password
of the listener's JAAS login for that mechanism, OAUTHBEARER with the token in the file
``sasl.oauthbearer.token.endpoint.url`` names."""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.config.listeners import Listener
from odradek.broker.security.sasl_client import (
    CLIENT_MECHANISMS,
    OAuthBearerClientExchange,
    SaslClientError,
    SaslClientExchange,
    SaslCredentials,
    client_exchange,
    credentials_from_jaas,
)
from odradek.broker.security.tls_context import ReloadingClientContext, TlsConfigError, TlsSettings


@dataclass(frozen=True)
class PeerSecurity:
    tls: ReloadingClientContext | None = None
    # a new SASL login (an exchange) for each connection and re-authentication
    sasl_login: Callable[[], SaslClientExchange] | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The newest client context (key or trust store replaced on disk: the new one)."""
        return self.tls.current() if self.tls is not None else None

    def sasl_exchange(self) -> SaslClientExchange | None:
        return self.sasl_login() if self.sasl_login is not None else None


PLAINTEXT = PeerSecurity()


def inter_broker_security(config: BrokerConfig) -> PeerSecurity:
    """ConfigError, naming the key, for what a broker could not log in to others with."""
    listener = config.inter_broker_listener
    protocol = listener.security_protocol
    tls = None
    if protocol.uses_tls:
        algorithm = config.listener_str(listener, "ssl.endpoint.identification.algorithm") or ""
        if algorithm.lower() not in ("", "https"):
            raise ConfigError(
                f"ssl.endpoint.identification.algorithm: {algorithm!r} is not https or empty"
            )
        settings = TlsSettings.from_config(lambda key: config.listener_str(listener, key))
        try:
            tls = ReloadingClientContext(settings, check_hostname=algorithm.lower() == "https")
        except (TlsConfigError, OSError, ssl.SSLError) as error:
            raise ConfigError(f"inter-broker listener {listener.name}: {error}") from None
    if not protocol.uses_sasl:
        return PeerSecurity(tls)
    mechanism = str(config.get("sasl.mechanism.inter.broker.protocol")).upper()
    if mechanism not in CLIENT_MECHANISMS:
        raise ConfigError(
            f"sasl.mechanism.inter.broker.protocol: brokers cannot log in to each other with"
            f" {mechanism} yet; use one of {', '.join(CLIENT_MECHANISMS)}"
        )
    enabled = config.listener_value(listener, "sasl.enabled.mechanisms")
    if not isinstance(enabled, list) or mechanism not in enabled:
        raise ConfigError(
            f"sasl.mechanism.inter.broker.protocol: {mechanism} is not in"
            f" sasl.enabled.mechanisms of the inter-broker listener {listener.name}"
        )
    if mechanism == "OAUTHBEARER":
        token_file = _token_file(config, listener)
        return PeerSecurity(tls, functools.partial(OAuthBearerClientExchange, token_file))
    credentials = _credentials(config, listener, mechanism)
    return PeerSecurity(tls, functools.partial(client_exchange, mechanism, credentials))


def _credentials(config: BrokerConfig, listener: Listener, mechanism: str) -> SaslCredentials:
    """From ``listener.name.<l>.<mechanism>.sasl.jaas.config``, else ``sasl.jaas.config``
    (with or without the listener prefix), as Kafka looks the broker's login up."""
    key = f"{listener.config_prefix}{mechanism.lower()}.sasl.jaas.config"
    jaas = config.mechanism_str(listener, mechanism, "sasl.jaas.config")
    if jaas is None:
        raise ConfigError(
            f"{key}: the inter-broker listener {listener.name} uses SASL and this broker needs"
            " a username and password to log in to the others with"
        )
    try:
        return credentials_from_jaas(jaas, key)
    except SaslClientError as error:
        raise ConfigError(str(error)) from None


def _token_file(config: BrokerConfig, listener: Listener) -> Path:
    """The file ``sasl.oauthbearer.token.endpoint.url`` names (the OAUTHBEARER mechanism's
    own, else the listener's, else the broker's), which must exist."""
    key = f"{listener.config_prefix}oauthbearer.sasl.oauthbearer.token.endpoint.url"
    url = config.mechanism_str(listener, "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url")
    if url is None:
        raise ConfigError(
            f"{key}: the inter-broker listener {listener.name} uses OAUTHBEARER and this"
            " broker needs a token file to log in to the others with"
        )
    path = Path(url2pathname(urlsplit(url).path))
    if not path.is_file():
        raise ConfigError(f"{key}: {path} is not a file")
    return path
