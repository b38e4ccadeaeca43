"""Describing effective configuration with Kafka's sources and synonyms."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import TopicMetadata
from odradek.broker.config.definitions import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigDef
from odradek.broker.config.topic_config import broker_default
from odradek.broker.server.context import BrokerContext

# Kafka's DescribeConfigs config_source values.
TOPIC_CONFIG = 1
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5


@dataclass(frozen=True)
class Synonym:
    name: str
    value: object
    source: int


@dataclass(frozen=True)
class ConfigEntry:
    name: str
    value: object
    source: int
    definition: ConfigDef
    synonyms: tuple[Synonym, ...]


def describe_topic_config(context: BrokerContext, topic: TopicMetadata) -> list[ConfigEntry]:
    config = context.topic_config(topic)
    entries = []
    for name, definition in TOPIC_CONFIGS.items():
        synonyms = []
        if name in topic.configs:
            synonyms.append(Synonym(name, config.get(name), TOPIC_CONFIG))
        synonym = definition.broker_synonym
        if synonym and context.config.is_set(synonym):
            synonyms.append(Synonym(synonym, context.config.get(synonym), STATIC_BROKER_CONFIG))
        synonyms.append(
            Synonym(synonym or name, broker_default(context.config, name), DEFAULT_CONFIG)
        )
        first = synonyms[0]
        entries.append(ConfigEntry(name, first.value, first.source, definition, tuple(synonyms)))
    return entries


def describe_broker_config(context: BrokerContext) -> list[ConfigEntry]:
    entries = []
    for name, definition in BROKER_CONFIGS.items():
        source = STATIC_BROKER_CONFIG if context.config.is_set(name) else DEFAULT_CONFIG
        value = context.config.get(name)
        entries.append(
            ConfigEntry(name, value, source, definition, (Synonym(name, value, source),))
        )
    return entries
