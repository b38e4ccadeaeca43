"""The custom resources the operator serves, each with its reconciliation pass."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .cluster_sync import sync_cluster
from .context import Context, Log
from .metrics import measured
from .mirror_sync import sync_mirror
from .topic_sync import sync_topic
from .user_sync import sync_user

Sync = Callable[[Context, Mapping[str, Any], Log], object]

_LOCKS: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
"""One pass at a time per resource: kopf's handlers and the resync loop run in threads."""


@dataclass(frozen=True)
class Served:
    kind: str
    plural: str
    sync: Sync

    def run(self, ctx: Context, body: Mapping[str, Any], logger: Log) -> None:
        with _LOCKS[body["metadata"]["uid"]], measured(self.kind):
            self.sync(ctx, body, logger)


CLUSTERS = Served("Cluster", "clusters", sync_cluster)
TOPICS = Served("Topic", "topics", sync_topic)
MIRRORMAKERS = Served("MirrorMaker", "mirrormakers", sync_mirror)
USERS = Served("User", "users", sync_user)
SERVED = (CLUSTERS, TOPICS, MIRRORMAKERS, USERS)
