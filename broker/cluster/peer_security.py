"""How this broker reaches other brokers: the security protocol of the inter-broker
listener, from Kafka's settings. TLS uses the listener's trust store and the broker's own
key store as its client certificate (mutual TLS), checking the other broker's host name
unless ``ssl.endpoint.identification.algorithm`` is empty; SASL logs in with
``sasl.mechanism.inter.broker.protocol`` and the username and password of the listener's
JAAS login for that mechanism."""

from __future__ import annotations

import ssl
from dataclasses import dataclass

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.config.listeners import Listener
from odradek.broker.security.sasl_client import (
    CLIENT_MECHANISMS,
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
    sasl_mechanism: str | None = None
    credentials: SaslCredentials | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        """The newest client context (key or trust store replaced on disk: the new one)."""
        return self.tls.current() if self.tls is not None else None

    def sasl_exchange(self) -> SaslClientExchange | None:
        if self.sasl_mechanism is None or self.credentials is None:
            return None
        return client_exchange(self.sasl_mechanism, self.credentials)


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
    return PeerSecurity(tls, mechanism, _credentials(config, listener, mechanism))


def _credentials(config: BrokerConfig, listener: Listener, mechanism: str) -> SaslCredentials:
    """From ``listener.name.<l>.<mechanism>.sasl.jaas.config``, else ``sasl.jaas.config``
    (with or without the listener prefix), as Kafka looks the broker's login up."""
    key = f"{listener.config_prefix}{mechanism.lower()}.sasl.jaas.config"
    own = config.values.get(key)
    if own is None:
        key = "sasl.jaas.config"
        own = config.listener_str(listener, key)
    if own is None:
        raise ConfigError(
            f"{listener.config_prefix}{mechanism.lower()}.sasl.jaas.config: the inter-broker"
            f" listener {listener.name} uses SASL and this broker needs a username and password"
            " to log in to the others with"
        )
    try:
        return credentials_from_jaas(str(own), key)
    except SaslClientError as error:
        raise ConfigError(str(error)) from None
