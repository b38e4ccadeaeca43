"""Describing effective configuration with Kafka's sources and synonyms."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import TopicMetadata
from odradek.broker.config.broker_config import ConfigSource
from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigDef
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
        # The default shown is the broker key's own (log.retention.hours=168), as in Kafka;
        # keys whose broker default is unset (log.roll.ms) show the topic's effective one.
        default_key = keys[-1] if keys else name
        default = BROKER_CONFIGS[default_key].default if keys else None
        if default is None:
            default = broker_default(broker, name)
        synonyms.append(Synonym(default_key, default, ConfigSource.DEFAULT_CONFIG))
        source = synonyms[0].source
        entries.append(ConfigEntry(name, config.get(name), source, definition, tuple(synonyms)))
    return entries


def describe_broker_config(context: BrokerContext) -> list[ConfigEntry]:
    broker = context.config
    entries = []
    for name, definition in BROKER_CONFIGS.items():
        synonyms = tuple(Synonym(name, value, source) for source, value in broker.synonyms(name))
        entries.append(
            ConfigEntry(name, broker.get(name), broker.source(name), definition, synonyms)
        )
    return entries
