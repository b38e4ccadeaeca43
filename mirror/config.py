"""mirror.yaml: the file the operator writes from a MirrorMaker spec, loaded and validated.

Keys are the spec's camelCase names. Every error names the field it is about
(``source.bootstrapServers: ...``); unknown fields are refused so a typo is not
silently ignored. A client setting may read a value from a file, as Kafka's
DirectoryConfigProvider does: ``${directory:/etc/secret:password}``. Besides the
operator's fields the file takes runtime tuning: ``refreshIntervalSeconds``,
``commitIntervalSeconds``, ``queueSize`` and ``replicationFactor``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar, cast

import yaml

from odradek.config_references import UnreadableReference, resolved

from .constants import (
    DEFAULT_COMMIT_INTERVAL_S,
    DEFAULT_INTERVAL_S,
    DEFAULT_QUEUE_SIZE,
    DEFAULT_REFRESH_INTERVAL_S,
    DEFAULT_REPLICATION_FACTOR,
    MIRROR_GROUP,
)

ALIAS_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")
Naming = Literal["prefix", "identity"]
T = TypeVar("T")


class MirrorConfigError(ValueError):
    """The config file is unreadable or a field is invalid; the message names the field."""


@dataclass(frozen=True)
class Endpoint:
    """One side of the mirror."""

    alias: str
    bootstrap_servers: str
    client_config: Mapping[str, str] = field(repr=False)
    """Extra librdkafka/Kafka client settings (security, timeouts); may hold a password."""


@dataclass(frozen=True)
class Selection:
    """Regular expressions (full match) selecting names: included unless excluded."""

    include: tuple[str, ...]
    exclude: tuple[str, ...]


@dataclass(frozen=True)
class OffsetSyncSettings:
    enabled: bool
    interval_s: float


@dataclass(frozen=True)
class CheckpointSettings:
    enabled: bool
    interval_s: float
    sync_group_offsets: bool


@dataclass(frozen=True)
class MirrorConfig:
    """Everything one mirror process needs."""

    name: str
    source: Endpoint
    target: Endpoint
    topics: Selection
    groups: Selection
    naming: Naming
    offset_sync: OffsetSyncSettings
    checkpoints: CheckpointSettings
    exactly_once: bool = False
    refresh_interval_s: float = DEFAULT_REFRESH_INTERVAL_S
    commit_interval_s: float = DEFAULT_COMMIT_INTERVAL_S
    queue_size: int = DEFAULT_QUEUE_SIZE
    replication_factor: int = DEFAULT_REPLICATION_FACTOR

    @property
    def group_id(self) -> str:
        """The source consumer group shared by every process running this config."""
        return MIRROR_GROUP.format(name=self.name)


class _Section:
    """A mapping being read field by field; remembers which keys were used."""

    def __init__(self, data: object, path: str) -> None:
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise MirrorConfigError(f"{path or 'the file'}: expected a mapping")
        self.data: Mapping[object, object] = data
        self.path = path
        self.used: set[str] = set()

    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def raw(self, key: str) -> object:
        self.used.add(key)
        return self.data.get(key)

    def typed(self, key: str, kind: type[T] | tuple[type, ...], default: T | None = None) -> T:
        value = self.raw(key)
        if value is None:
            if default is None:
                raise MirrorConfigError(f"{self.field(key)}: required")
            return default
        if isinstance(value, bool) and kind is not bool:
            raise MirrorConfigError(f"{self.field(key)}: expected {_kind_name(kind)}, got {value}")
        if not isinstance(value, kind):
            raise MirrorConfigError(
                f"{self.field(key)}: expected {_kind_name(kind)}, got {value!r}"
            )
        return cast(T, value)

    def text(self, key: str, default: str | None = None) -> str:
        value = self.typed(key, str, default)
        if not value:
            raise MirrorConfigError(f"{self.field(key)}: must not be empty")
        return value

    def number(self, key: str, default: float, minimum: float) -> float:
        value = float(self.typed(key, (int, float), default))
        if value < minimum:
            raise MirrorConfigError(
                f"{self.field(key)}: must be at least {minimum:g}, got {value:g}"
            )
        return value

    def section(self, key: str) -> _Section:
        return _Section(self.raw(key), self.field(key))

    def finish(self) -> None:
        unknown = sorted(str(k) for k in self.data if k not in self.used)
        if unknown:
            raise MirrorConfigError(f"{self.field(unknown[0])}: unknown field")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {bool: "true or false", str: "a string", int: "an integer", float: "a number"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _endpoint(section: _Section) -> Endpoint:
    alias = section.text("alias")
    if not ALIAS_PATTERN.fullmatch(alias):
        raise MirrorConfigError(
            f"{section.field('alias')}: {alias!r} must be 1-64 letters, digits, '_' or '-'"
        )
    servers = section.text("bootstrapServers")
    extra = section.section("config")
    client_config = {str(k): _resolved(extra.field(str(k)), str(v)) for k, v in extra.data.items()}
    extra.used.update(client_config)
    section.finish()
    return Endpoint(alias, servers, client_config)


def _resolved(where: str, value: str) -> str:
    try:
        return resolved(value)
    except UnreadableReference as error:
        raise MirrorConfigError(f"{where}: {error}") from None


def _patterns(section: _Section, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = section.raw(key)
    if value is None:
        return default
    if not isinstance(value, list):
        raise MirrorConfigError(f"{section.field(key)}: expected a list of regular expressions")
    for index, pattern in enumerate(value):
        where = f"{section.field(key)}[{index}]"
        if not isinstance(pattern, str) or not pattern:
            raise MirrorConfigError(f"{where}: expected a non-empty string")
        try:
            re.compile(pattern)
        except re.error as error:
            raise MirrorConfigError(f"{where}: invalid regular expression ({error})") from None
    return tuple(value)


def _selection(section: _Section, include: tuple[str, ...]) -> Selection:
    selection = Selection(_patterns(section, "include", include), _patterns(section, "exclude", ()))
    section.finish()
    return selection


def parse_config(document: object) -> MirrorConfig:
    """Validate a parsed mirror.yaml document."""
    root = _Section(document, "")
    source = _endpoint(root.section("source"))
    target = _endpoint(root.section("target"))
    if source.alias == target.alias:
        raise MirrorConfigError(f"target.alias: must differ from source.alias ({source.alias!r})")
    naming = root.text("naming", "prefix")
    if naming not in ("prefix", "identity"):
        raise MirrorConfigError(f"naming: expected 'prefix' or 'identity', got {naming!r}")
    sync = root.section("offsetSync")
    offset_sync = OffsetSyncSettings(
        sync.typed("enabled", bool, True), sync.number("intervalSeconds", DEFAULT_INTERVAL_S, 0.1)
    )
    sync.finish()
    points = root.section("checkpoints")
    checkpoints = CheckpointSettings(
        points.typed("enabled", bool, True),
        points.number("intervalSeconds", DEFAULT_INTERVAL_S, 0.1),
        points.typed("syncGroupOffsets", bool, False),
    )
    points.finish()
    config = MirrorConfig(
        name=root.text("name", f"{source.alias}-to-{target.alias}"),
        source=source,
        target=target,
        topics=_selection(root.section("topics"), (".*",)),
        groups=_selection(root.section("groups"), ()),
        naming=cast(Naming, naming),
        offset_sync=offset_sync,
        checkpoints=checkpoints,
        exactly_once=root.typed("exactlyOnce", bool, False),
        refresh_interval_s=root.number("refreshIntervalSeconds", DEFAULT_REFRESH_INTERVAL_S, 0.1),
        commit_interval_s=root.number("commitIntervalSeconds", DEFAULT_COMMIT_INTERVAL_S, 0.01),
        queue_size=int(root.number("queueSize", DEFAULT_QUEUE_SIZE, 1)),
        replication_factor=int(root.number("replicationFactor", DEFAULT_REPLICATION_FACTOR, -1)),
    )
    root.finish()
    if config.replication_factor == 0:
        raise MirrorConfigError(
            "replicationFactor: must be -1 (the target's default) or at least 1"
        )
    return config


def load_config(path: Path) -> MirrorConfig:
    """Read and validate a mirror.yaml file."""
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise MirrorConfigError(f"cannot read {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise MirrorConfigError(f"{path} is not valid YAML: {error}") from None
    return parse_config(document)
