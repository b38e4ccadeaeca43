"""The custom resources as Python models: the single source of the CRD schemas."""

from __future__ import annotations

from .cluster import ClusterSpec, ClusterStatus
from .mirrormaker import MirrorMakerSpec, MirrorMakerStatus
from .topic import TopicSpec, TopicStatus
from .user import UserSpec, UserStatus

__all__ = [
    "ClusterSpec",
    "ClusterStatus",
    "MirrorMakerSpec",
    "MirrorMakerStatus",
    "TopicSpec",
    "TopicStatus",
    "UserSpec",
    "UserStatus",
]
