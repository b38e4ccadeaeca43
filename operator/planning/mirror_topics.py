"""Which of a target cluster's topics a mirror has produced."""

from __future__ import annotations

import re
from collections.abc import Iterable

from odradek.mirror.naming import is_internal

from ..models import MirrorMakerSpec


def selected(name: str, include: Iterable[str], exclude: Iterable[str]) -> bool:
    """Included by a full match of one pattern and excluded by none."""
    return any(re.fullmatch(p, name) for p in include) and not any(
        re.fullmatch(p, name) for p in exclude
    )


def mirrored_topics(spec: MirrorMakerSpec, target_topics: Iterable[str]) -> list[str]:
    """Target topics that are mirrors of selected source topics, under the naming policy."""
    prefix = f"{spec.source.alias}." if spec.naming == "prefix" else ""
    found = []
    for name in target_topics:
        if not name.startswith(prefix) or is_internal(name):
            continue
        if selected(name[len(prefix) :], spec.topics.include, spec.topics.exclude):
            found.append(name)
    return sorted(found)
