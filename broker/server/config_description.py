"""Describing effective configuration with Kafka's sources and synonyms."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import TopicMetadata
from odradek.broker.config.broker_config import BrokerConfig, ConfigSource
from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigDef
from odradek.broker.config.dynamic_group_configs import GROUP_CONFIGS, default_sources
from odradek.broker.config.parsing import definition_of, parse_value
from odradek.broker.config.topic_config import broker_default, broker_synonyms
from odradek.broker.server.context import BrokerContext


@dataclass(frozen=True)
class Synonym:
    name: str
    value: object
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: object
    source: ConfigSource
    definition: ConfigDef
    synonyms: tuple[Synonym, ...]
    read_only: bool = False  # a broker key that cannot change at run time


def describe_topic_config(context: BrokerContext, topic: TopicMetadata) -> list[ConfigEntry]:
    config = context.topic_config(topic)
    broker = context.config
    entries = []
    for name, definition in TOPIC_CONFIGS.items():
        synonyms = []
        if name in topic.configs:
            synonyms.append(Synonym(name, config.get(name), ConfigSource.TOPIC_CONFIG))
        keys = broker_synonyms(name)
        synonyms.extend(
            Synonym(key, value, source)
            for key in keys
            for source, value in broker.synonyms(key)
            if source is not ConfigSource.DEFAULT_CONFIG
        )
        if keys:
            # The default shown is the broker key's own (log.retention.hours=168), as in
            # Kafka; keys whose broker default is unset (log.roll.ms) show the topic's one.
            default = BROKER_CONFIGS[keys[-1]].default
            if default is None:
                default = broker_default(broker, name)
            synonyms.append(Synonym(keys[-1], default, ConfigSource.DEFAULT_CONFIG))
        # A key no broker key supplies (leader.replication.throttled.replicas) has no
        # synonym but its own value, when set, as in Kafka.
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        entries.append(ConfigEntry(name, config.get(name), source, definition, tuple(synonyms)))
    return entries


def describe_group_config(context: BrokerContext, group_id: str) -> list[ConfigEntry]:
    """Every group config of Kafka 4.3, as Kafka describes a group (it need not exist): the
    group's own value (GROUP_CONFIG) first among the synonyms, then where the default comes
    from (the broker key's layers, or the config's own default)."""
    own = context.store.image.group_configs.get(group_id, {})
    entries = []
    for name, definition in GROUP_CONFIGS.items():
        synonyms = [
            Synonym(key, value, source)
            for key, source, value in default_sources(context.config, name)
        ]
        if name in own:
            value = parse_value(definition, own[name])
            synonyms.insert(0, Synonym(name, value, ConfigSource.GROUP_CONFIG))
        first = synonyms[0]
        entries.append(ConfigEntry(name, first.value, first.source, definition, tuple(synonyms)))
    return entries


def describe_broker_config(context: BrokerContext) -> list[ConfigEntry]:
    """Every key as this broker resolves it, and the ``listener.name.<l>.`` keys it has."""
    broker = context.config
    named = [*BROKER_CONFIGS.items(), *_prefixed(broker)]
    entries = []
    for name, definition in named:
        synonyms = tuple(Synonym(name, value, source) for source, value in broker.synonyms(name))
        entries.append(
            ConfigEntry(
                name,
                synonyms[0].value,
                synonyms[0].source,
                definition,
                synonyms,
                read_only=not definition.dynamic,
            )
        )
    return entries


def _prefixed(broker: BrokerConfig) -> list[tuple[str, ConfigDef]]:
    found = ((name, definition_of(BROKER_CONFIGS, name)) for name in broker.prefixed_names())
    return [(name, definition) for name, definition in found if definition is not None]


def describe_cluster_default_config(context: BrokerContext) -> list[ConfigEntry]:
    """The cluster-wide dynamic defaults only (the broker resource ``""``), as in Kafka:
    without this broker's own dynamic values among the synonyms."""
    broker = context.config
    return [
        ConfigEntry(
            name,
            value,
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
            _definition(name),
            tuple(
                Synonym(name, synonym, source)
                for source, synonym in broker.synonyms(name)
                if source is not ConfigSource.DYNAMIC_BROKER_CONFIG
            ),
        )
        for name, value in broker.dynamic_default.items()
    ]


def _definition(name: str) -> ConfigDef:
    definition = definition_of(BROKER_CONFIGS, name)
    assert definition is not None, name  # dynamic values are validated when stored
    return definition
