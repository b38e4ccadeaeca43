"""Which source topics are mirrored and under which name on the target.

``prefix`` names a mirrored topic ``<source alias>.<topic>``; ``identity`` keeps
the name. A source topic already carrying the target's alias prefix is itself
a mirror of the target and is never mirrored back, so two clusters can mirror
each other. Internal topics (``__*``, ``*.internal``) are never mirrored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .config import MirrorConfig, Naming, Selection
from .constants import (
    CHECKPOINTS_TOPIC,
    INTERNAL_TOPIC_SUFFIX,
    MIRROR_OFFSETS_TOPIC,
    OFFSET_SYNCS_TOPIC,
)


@dataclass(frozen=True)
class NameFilter:
    """Compiled include/exclude patterns; a name must fully match."""

    include: tuple[re.Pattern[str], ...]
    exclude: tuple[re.Pattern[str], ...]

    @classmethod
    def of(cls, selection: Selection) -> NameFilter:
        return cls(
            tuple(re.compile(p) for p in selection.include),
            tuple(re.compile(p) for p in selection.exclude),
        )

    def matches(self, name: str) -> bool:
        return any(p.fullmatch(name) for p in self.include) and not any(
            p.fullmatch(name) for p in self.exclude
        )


def is_internal(topic: str) -> bool:
    """Kafka's internal topics and the mirror's own (checkpoints, offset syncs)."""
    return topic.startswith("__") or topic.endswith(INTERNAL_TOPIC_SUFFIX)


@dataclass(frozen=True)
class NamingPolicy:
    """Maps source topic names to target names and refuses loops."""

    naming: Naming
    source_alias: str
    target_alias: str

    @classmethod
    def of(cls, config: MirrorConfig) -> NamingPolicy:
        return cls(config.naming, config.source.alias, config.target.alias)

    def target_topic(self, source_topic: str) -> str:
        if self.naming == "prefix":
            return f"{self.source_alias}.{source_topic}"
        return source_topic

    def came_from_target(self, source_topic: str) -> bool:
        """The topic is a mirror of the target's own topic (would loop back)."""
        return self.naming == "prefix" and source_topic.startswith(f"{self.target_alias}.")

    def mirrors(self, source_topic: str, selection: NameFilter) -> bool:
        """The source topic is selected and safe to mirror."""
        return (
            not is_internal(source_topic)
            and not self.came_from_target(source_topic)
            and selection.matches(source_topic)
        )

    @property
    def checkpoints_topic(self) -> str:
        return CHECKPOINTS_TOPIC.format(source=self.source_alias)

    @property
    def offset_syncs_topic(self) -> str:
        return OFFSET_SYNCS_TOPIC.format(source=self.source_alias)

    @property
    def mirror_offsets_topic(self) -> str:
        return MIRROR_OFFSETS_TOPIC.format(source=self.source_alias)
