"""Kafka's named listeners: ``listeners``, ``advertised.listeners``,
``listener.security.protocol.map`` and the inter-broker listener, parsed and checked as
Kafka checks them, with messages that name the key at fault."""

from __future__ import annotations

import enum
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from odradek.broker.config.definitions import ConfigError

WILDCARD_HOST = "0.0.0.0"


class SecurityProtocol(enum.Enum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @property
    def uses_tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def uses_sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


@dataclass(frozen=True)
class Listener:
    """One named endpoint: ``name`` is how the protocol map and ``listener.name.<name>.*``
    refer to it (upper case, as Kafka keeps it). An empty host binds every interface."""

    name: str
    security_protocol: SecurityProtocol
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"

    @property
    def bind_host(self) -> str:
        return self.host or WILDCARD_HOST

    @property
    def config_prefix(self) -> str:
        """Where this listener's own settings live: ``listener.name.<name>.``."""
        return f"listener.name.{self.name.lower()}."


def parse_protocol_map(text: str) -> dict[str, SecurityProtocol]:
    """``listener.security.protocol.map``: ``NAME:PROTOCOL`` pairs."""
    mapping: dict[str, SecurityProtocol] = {}
    for item in _items(text):
        name, separator, protocol = item.partition(":")
        if not separator or not name.strip():
            raise ConfigError(f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL")
        try:
            mapping[name.strip().upper()] = SecurityProtocol(protocol.strip().upper())
        except ValueError:
            known = ", ".join(p.value for p in SecurityProtocol)
            raise ConfigError(
                f"listener.security.protocol.map: {protocol.strip()!r} is not one of {known}"
            ) from None
    return mapping


def parse_listeners(
    key: str, text: str, protocols: Mapping[str, SecurityProtocol]
) -> list[Listener]:
    """``listeners`` or ``advertised.listeners``: ``NAME://host:port``, names unique and
    each in ``protocols``; an empty host means every interface."""
    listeners: list[Listener] = []
    for item in _items(text):
        name, separator, rest = item.partition("://")
        if not separator:
            raise ConfigError(f"{key}: {item!r} is not NAME://host:port")
        name = name.strip().upper()
        protocol = protocols.get(name)
        if protocol is None:
            raise ConfigError(
                f"{key}: listener {name} has no security protocol in listener.security.protocol.map"
            )
        host, port = _host_port(key, item, rest)
        if any(existing.name == name for existing in listeners):
            raise ConfigError(f"{key}: listener {name} is named twice")
        listeners.append(Listener(name, protocol, host, port))
    if not listeners:
        raise ConfigError(f"{key}: no listener given")
    return listeners


def advertised(
    listeners: Sequence[Listener],
    advertised_text: str | None,
    protocols: Mapping[str, SecurityProtocol],
) -> list[Listener]:
    """What each listener tells clients: ``advertised.listeners`` where given, else the bound
    address, this machine's name for an empty host; 0.0.0.0 cannot be advertised, as in
    Kafka."""
    if advertised_text:
        chosen = parse_listeners("advertised.listeners", advertised_text, protocols)
        bound = {listener.name for listener in listeners}
        for listener in chosen:
            if listener.name not in bound:
                raise ConfigError(
                    f"advertised.listeners: listener {listener.name} is not in listeners"
                )
        return chosen
    for listener in listeners:
        if listener.host == WILDCARD_HOST:
            raise ConfigError(
                f"listeners: {listener} binds every interface; set advertised.listeners"
                " to the address clients should use"
            )
    return [replace(item, host=item.host or socket.getfqdn()) for item in listeners]


def inter_broker_listener(
    listeners: Sequence[Listener], name: str | None, protocol: str | None
) -> Listener:
    """The listener brokers use among themselves: ``inter.broker.listener.name``, or the
    one whose protocol is ``security.inter.broker.protocol`` (not both, as in Kafka)."""
    if name and protocol:
        raise ConfigError(
            "inter.broker.listener.name and security.inter.broker.protocol are both set;"
            " set only one"
        )
    if name:
        found = next((item for item in listeners if item.name == name.upper()), None)
        if found is None:
            raise ConfigError(
                f"inter.broker.listener.name: {name} is not one of the advertised listeners"
            )
        return found
    wanted = (protocol or SecurityProtocol.PLAINTEXT.value).upper()
    found = next((item for item in listeners if item.security_protocol.value == wanted), None)
    if found is None:
        raise ConfigError(
            f"security.inter.broker.protocol: no advertised listener uses {wanted};"
            " set inter.broker.listener.name"
        )
    return found


def _host_port(key: str, item: str, text: str) -> tuple[str, int]:
    parts = urlsplit("//" + text.strip())
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if port is None:
        raise ConfigError(f"{key}: {item!r} is not NAME://host:port")
    return host or "", port


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]
