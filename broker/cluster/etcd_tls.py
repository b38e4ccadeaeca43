"""TLS to etcd, from the ``etcd.ssl.*`` keys (named after Kafka's ``zookeeper.ssl.*``): the
CA etcd's certificate is checked against and the broker's client certificate for etcd's
``--client-cert-auth``, reread when the files change, for ``https://`` endpoints."""

from __future__ import annotations

import ssl

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import BROKER_CONFIGS, ConfigError
from odradek.broker.security.tls_context import ReloadingClientContext, TlsConfigError, TlsSettings

PREFIX = "etcd."


def etcd_tls(config: BrokerConfig) -> ReloadingClientContext | None:
    """The client context for https endpoints; None when every endpoint is http. A
    ConfigError names the key at fault."""
    endpoints = config.get("etcd.endpoints")
    assert isinstance(endpoints, list)
    secure = [e for e in endpoints if str(e).lower().startswith("https://")]
    configured = [
        name for name in BROKER_CONFIGS if name.startswith(PREFIX + "ssl.") and config.is_set(name)
    ]
    if not secure:
        if configured:
            raise ConfigError(f"{configured[0]}: set, but etcd.endpoints are not https:// URLs")
        return None
    if len(secure) != len(endpoints):
        raise ConfigError("etcd.endpoints: give every endpoint as https:// or none")

    def get(key: str) -> str | None:
        name = PREFIX + key
        return config.get_str(name) if name in BROKER_CONFIGS else None

    algorithm = config.get_str("etcd.ssl.endpoint.identification.algorithm") or ""
    try:
        return ReloadingClientContext(TlsSettings.from_config(get), algorithm == "https")
    except (TlsConfigError, OSError, ssl.SSLError) as error:
        message = f"etcd.{error}" if str(error).startswith("ssl.") else f"etcd: {error}"
        raise ConfigError(message) from None
