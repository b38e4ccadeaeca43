"""Which broker configs may change at run time, as Kafka 4.x decides (its
DynamicBrokerConfig), and why Odradek refuses the rest of Kafka's dynamic configs.

A broker key is dynamic when its ``ConfigDef`` says so: exactly the keys of
Kafka's list that Odradek implements. Kafka's other dynamic keys belong to
features Odradek does not have; setting one is refused with the reason below
rather than stored and ignored. (A key that becomes a dynamic ``ConfigDef``
must leave these tables; a unit test checks.)
"""

from __future__ import annotations

from collections.abc import Mapping

from odradek.broker.config.definitions import BROKER_CONFIGS, ConfigError
from odradek.broker.config.parsing import definition_of, parse_values

_SECURITY = (
    "Odradek's TLS and SASL settings are static: a TLS listener reloads its key and trust "
    "stores by itself when their files change; change the rest in the broker's static "
    "configuration and restart it"
)
_LISTENERS = (
    "Odradek binds its listeners when it starts: change them in the broker's static "
    "configuration and restart it"
)
_TIERED = "Odradek has no tiered storage"
_THREADS = "Odradek serves a broker on one asyncio event loop: it has no such thread pool to size"
_CLEANER = "Odradek's log cleaner has fixed buffers and an unthrottled I/O rate"
_CORDON = "Odradek cannot cordon log directories (KIP-1066)"
_LOG_DIR_MOVES = "Odradek does not throttle moves between log directories (AlterReplicaLogDirs)"
_GROUPS = (
    "Odradek's coordinator assigns a consumer group at the heartbeat that needs it and "
    "keeps no record cache; share and streams groups (KIP-932/1071) are not built"
)
_PLUGINS = "Odradek loads no Java plug-ins: metrics are served on /metrics"

# Kafka 4.3's dynamic broker configs that Odradek refuses, with the reason.
UNSUPPORTED_DYNAMIC_CONFIGS: dict[str, str] = {
    "listeners": _LISTENERS,
    "listener.security.protocol.map": _SECURITY,
    "principal.builder.class": _SECURITY,
    "follower.fetch.last.tiered.offset.enable": _TIERED,
    "background.threads": _THREADS,
    "num.io.threads": _THREADS,
    "num.network.threads": _THREADS,
    "num.recovery.threads.per.data.dir": _THREADS,
    "num.replica.fetchers": _THREADS,
    "log.cleaner.threads": _THREADS,
    "log.cleaner.dedupe.buffer.size": _CLEANER,
    "log.cleaner.io.buffer.size": _CLEANER,
    "log.cleaner.io.buffer.load.factor": _CLEANER,
    "log.cleaner.io.max.bytes.per.second": _CLEANER,
    "cordoned.log.dirs": _CORDON,
    "replica.alter.log.dirs.io.max.bytes.per.second": _LOG_DIR_MOVES,
    "group.consumer.assignment.interval.ms": _GROUPS,
    "group.share.assignment.interval.ms": _GROUPS,
    "group.streams.assignment.interval.ms": _GROUPS,
    "group.coordinator.cached.buffer.max.bytes": _GROUPS,
    "share.coordinator.cached.buffer.max.bytes": _GROUPS,
    "producer.id.expiration.ms": (
        "Odradek keeps an idempotent producer's state as long as its batches are in the log"
    ),
    "metric.reporters": _PLUGINS,
    "config.providers": _PLUGINS,
}
# Families of Kafka's dynamic keys, by prefix (listener.name.<listener>. for per-listener
# security configs).
UNSUPPORTED_DYNAMIC_PREFIXES: dict[str, str] = {
    "ssl.": _SECURITY,
    "sasl.": _SECURITY,
    "listener.name.": _SECURITY,
    "remote.": _TIERED,
}


def unsupported_reason(name: str) -> str | None:
    """Why Odradek refuses Kafka's dynamic config ``name``; None if it is not one of those."""
    reason = UNSUPPORTED_DYNAMIC_CONFIGS.get(name)
    if reason is not None:
        return reason
    return next(
        (why for prefix, why in UNSUPPORTED_DYNAMIC_PREFIXES.items() if name.startswith(prefix)),
        None,
    )


def validate_dynamic_broker_configs(configs: Mapping[str, str]) -> None:
    """Check a broker's (or the cluster default's) whole set of dynamic values; a
    ConfigError names what cannot be set, in Kafka's words for a static key."""
    definitions = {name: definition_of(BROKER_CONFIGS, name) for name in configs}
    for name, definition in sorted(definitions.items()):
        reason = unsupported_reason(name)
        if reason is not None and (definition is None or not definition.dynamic):
            raise ConfigError(f"{name}: {reason}")
        if definition is None:
            raise ConfigError(f"{name}: unknown configuration key")
    static = sorted(
        name for name, definition in definitions.items() if definition and not definition.dynamic
    )
    if static:
        raise ConfigError(f"Cannot update these configs dynamically: [{', '.join(static)}]")
    parse_values(BROKER_CONFIGS, configs)
