"""The broker's static configuration: a properties file, ``ODRADEK_*`` environment
variables and ``--set`` flags, in that order of increasing precedence."""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from odradek.broker.config.definitions import BROKER_CONFIGS, ConfigError
from odradek.broker.config.listeners import (
    Listener,
    SecurityProtocol,
    advertised,
    inter_broker_listener,
    parse_listeners,
    parse_protocol_map,
)
from odradek.broker.config.parsing import definition_of, format_value, parse_values

ENV_PREFIX = "ODRADEK_"
_ALIASES = {"broker.id": "node.id", "log.dir": "log.dirs"}


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_host_port(name: str, text: str) -> Address:
    """Parse ``host:port`` (IPv6 hosts in brackets)."""
    parts = urlsplit("//" + text.strip())
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise ConfigError(f"{name}: {text!r} is not host:port")
    return Address(host, port)


def read_properties(path: Path) -> dict[str, str]:
    """Read a Java-style properties file (key=value, # comments)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise ConfigError(f"config file {path}: {error.strerror}") from None
    values: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ConfigError(f"config file {path}, line {number}: expected key=value")
        values[key.strip()] = value.strip()
    return values


def environment_values(environ: Mapping[str, str]) -> dict[str, str]:
    """The broker keys set through ``ODRADEK_<KEY>`` (dots as underscores)."""
    by_env_name = {ENV_PREFIX + key.upper().replace(".", "_"): key for key in BROKER_CONFIGS}
    by_env_name.update({ENV_PREFIX + alias.upper().replace(".", "_"): alias for alias in _ALIASES})
    return {by_env_name[name]: value for name, value in environ.items() if name in by_env_name}


def parse_assignments(assignments: Iterable[str]) -> dict[str, str]:
    """Parse ``key=value`` flag values."""
    values: dict[str, str] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected key=value")
        values[key.strip()] = value
    return values


class ConfigSource(enum.IntEnum):
    """Kafka's DescribeConfigs config_source values, most specific first."""

    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    GROUP_CONFIG = 8  # a group's own value (Kafka's DYNAMIC_GROUP_CONFIG)


@dataclass(frozen=True)
class BrokerConfig:
    """Broker values in layers, as Kafka resolves them: this broker's dynamic
    values, then the cluster-wide dynamic defaults, then the static values of
    file/environment/flags, then the defaults of ``BROKER_CONFIGS``."""

    values: dict[str, object] = field(default_factory=dict)
    dynamic_default: dict[str, object] = field(default_factory=dict)
    dynamic_broker: dict[str, object] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        config_file: Path | None = None,
        environ: Mapping[str, str] | None = None,
        overrides: Mapping[str, str] | None = None,
    ) -> BrokerConfig:
        text: dict[str, str] = {}
        if config_file is not None:
            text.update(read_properties(config_file))
        text.update(environment_values(os.environ if environ is None else environ))
        text.update(overrides or {})
        text = {_ALIASES.get(key, key): value for key, value in text.items()}
        config = cls(parse_values(BROKER_CONFIGS, text))
        config.inter_broker_listener  # noqa: B018 - validates the listeners now, not at first use
        config.http_listener  # noqa: B018
        _check_queued_bytes(config)
        _check_heartbeat(config)
        return config

    def with_dynamic(self, default: Mapping[str, str], broker: Mapping[str, str]) -> BrokerConfig:
        """This configuration under dynamic values (as stored: text, already validated)."""
        return replace(
            self,
            dynamic_default=parse_values(BROKER_CONFIGS, default),
            dynamic_broker=parse_values(BROKER_CONFIGS, broker),
        )

    def _layers(self) -> tuple[tuple[ConfigSource, dict[str, object]], ...]:
        return (
            (ConfigSource.DYNAMIC_BROKER_CONFIG, self.dynamic_broker),
            (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, self.dynamic_default),
            (ConfigSource.STATIC_BROKER_CONFIG, self.values),
        )

    def get(self, name: str) -> object:
        for _, layer in self._layers():
            if name in layer:
                return layer[name]
        return BROKER_CONFIGS[name].default

    def source(self, name: str) -> ConfigSource:
        return next(
            (source for source, layer in self._layers() if name in layer),
            ConfigSource.DEFAULT_CONFIG,
        )

    def synonyms(self, name: str) -> list[tuple[ConfigSource, object]]:
        """Every layer that sets ``name``, most specific first, then the default (of the
        key a ``listener.name.<l>.`` one refines)."""
        found = [(source, layer[name]) for source, layer in self._layers() if name in layer]
        definition = definition_of(BROKER_CONFIGS, name)
        default = definition.default if definition is not None else None
        return [*found, (ConfigSource.DEFAULT_CONFIG, default)]

    def prefixed_names(self) -> list[str]:
        """The ``listener.name.<l>.`` keys some layer sets, sorted."""
        return sorted({name for _, layer in self._layers() for name in layer} - set(BROKER_CONFIGS))

    def get_int(self, name: str) -> int:
        value = self.get(name)
        assert isinstance(value, int)
        return value

    def get_bool(self, name: str) -> bool:
        return bool(self.get(name))

    def get_str(self, name: str) -> str | None:
        value = self.get(name)
        return None if value is None else str(value)

    def is_set(self, name: str) -> bool:
        return self.source(name) is not ConfigSource.DEFAULT_CONFIG

    @property
    def node_id(self) -> int:
        return self.get_int("node.id")

    @property
    def log_dirs(self) -> tuple[Path, ...]:
        """The log directories (``log.dirs``, comma-separated: JBOD)."""
        listed = (item.strip() for item in str(self.get("log.dirs")).split(","))
        return tuple(Path(item).expanduser() for item in listed if item)

    @property
    def data_dir(self) -> Path:
        """The first log directory, which also holds the broker's own state."""
        return self.log_dirs[0]

    def listener_value(self, listener: Listener, name: str) -> object:
        """``name`` as ``listener`` sees it: its own ``listener.name.<l>.<name>`` where set."""
        own = self.listener_own_value(listener, name)
        return self.get(name) if own is None else own

    def listener_own_value(self, listener: Listener, name: str) -> object:
        """``listener``'s own ``listener.name.<l>.<name>``; None where it has none."""
        return self._set_value(listener.config_prefix + name)

    def mechanism_str(self, listener: Listener, mechanism: str, name: str) -> str | None:
        """``name`` as ``mechanism`` on ``listener`` sees it: its own
        ``listener.name.<l>.<mechanism>.<name>`` where set, else the listener's."""
        value = self._set_value(f"{listener.config_prefix}{mechanism.lower()}.{name}")
        return format_value(value) if value is not None else self.listener_str(listener, name)

    def _set_value(self, name: str) -> object:
        """``name``'s value in the most specific layer that sets it; None if none does."""
        return next((layer[name] for _, layer in self._layers() if name in layer), None)

    def listener_str(self, listener: Listener, name: str) -> str | None:
        value = self.listener_value(listener, name)
        return None if value is None else format_value(value)

    @property
    def protocol_map(self) -> dict[str, SecurityProtocol]:
        return parse_protocol_map(str(self.get("listener.security.protocol.map")))

    @property
    def listeners(self) -> list[Listener]:
        """The listeners to bind (``listeners``)."""
        return parse_listeners("listeners", str(self.get("listeners")), self.protocol_map)

    @property
    def advertised_listeners(self) -> list[Listener]:
        """What each listener tells clients (``advertised.listeners``, else ``listeners``)."""
        return advertised(self.listeners, self.get_str("advertised.listeners"), self.protocol_map)

    @property
    def inter_broker_listener(self) -> Listener:
        """The advertised listener other brokers reach this one on."""
        return inter_broker_listener(
            self.advertised_listeners,
            self.get_str("inter.broker.listener.name"),
            self.get_str("security.inter.broker.protocol"),
        )

    @property
    def http_listener(self) -> Address:
        return parse_host_port("http.listener", str(self.get("http.listener")))


def _check_queued_bytes(config: BrokerConfig) -> None:
    """Kafka's rule: a bound on queued request bytes must hold a largest request."""
    queued, largest = (
        config.get_int("queued.max.request.bytes"),
        config.get_int("socket.request.max.bytes"),
    )
    if 0 < queued < largest:
        raise ConfigError(
            f"queued.max.request.bytes: {queued} is below socket.request.max.bytes ({largest});"
            " give 0 or less for no limit"
        )


def _check_heartbeat(config: BrokerConfig) -> None:
    """A session refreshed no more often than it lasts would lapse between refreshes."""
    heartbeat, session = (
        config.get_int("broker.heartbeat.interval.ms"),
        config.get_int("broker.session.timeout.ms"),
    )
    if heartbeat >= session:
        raise ConfigError(
            f"broker.heartbeat.interval.ms: {heartbeat} must be less than "
            f"broker.session.timeout.ms ({session})"
        )
