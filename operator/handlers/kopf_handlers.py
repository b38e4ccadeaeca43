"""kopf registrations: fast reaction to changes; the resync loop does the rest."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from typing import Any

import kopf
from prometheus_client import start_http_server

from ..constants import FINALIZER, GROUP, OUT_OF_CLUSTER_ENV, VERSION
from .confluent_admin import ConfluentAdmin
from .context import Context, Log
from .kube import ApiKube
from .resources import CLUSTERS, MIRRORMAKERS, TOPICS, USERS
from .resync import resync_forever
from .topic_sync import delete_topic
from .user_sync import delete_user

METRICS_PORT = int(os.environ.get("ODRADEK_OPERATOR_METRICS_PORT", "9090"))
METRICS_ADDRESS = os.environ.get("ODRADEK_OPERATOR_METRICS_ADDRESS", "0.0.0.0")


def watched_namespaces() -> tuple[str, ...]:
    """ODRADEK_WATCH_NAMESPACES, comma-separated; empty means all (the chart sets both)."""
    raw = os.environ.get("ODRADEK_WATCH_NAMESPACES", "")
    return tuple(n.strip() for n in raw.split(",") if n.strip())


@kopf.on.startup()
async def start(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=GROUP)
    settings.persistence.finalizer = FINALIZER
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.posting.level = logging.WARNING
    memo.context = Context(
        kube=ApiKube(),
        admin=functools.cache(ConfluentAdmin),
        out_of_cluster=os.environ.get(OUT_OF_CLUSTER_ENV) == "1",
    )
    start_http_server(METRICS_PORT, addr=METRICS_ADDRESS)
    memo.resync = asyncio.create_task(resync_forever(memo.context, watched_namespaces()))


@kopf.on.cleanup()
async def stop(memo: kopf.Memo, **_: Any) -> None:
    memo.resync.cancel()


@kopf.on.resume(group=GROUP, version=VERSION, plural=CLUSTERS.plural)
@kopf.on.create(group=GROUP, version=VERSION, plural=CLUSTERS.plural)
@kopf.on.update(group=GROUP, version=VERSION, plural=CLUSTERS.plural)
def cluster_changed(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    CLUSTERS.run(memo.context, body, logger)


@kopf.on.resume(group=GROUP, version=VERSION, plural=TOPICS.plural)
@kopf.on.create(group=GROUP, version=VERSION, plural=TOPICS.plural)
@kopf.on.update(group=GROUP, version=VERSION, plural=TOPICS.plural)
def topic_changed(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    TOPICS.run(memo.context, body, logger)


def _deletes_topic(spec: kopf.Spec, **_: Any) -> bool:
    return bool(spec.get("deletionPolicy", "Delete") == "Delete")


@kopf.on.delete(group=GROUP, version=VERSION, plural=TOPICS.plural, when=_deletes_topic)
def topic_deleted(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    delete_topic(memo.context, body, logger)


@kopf.on.resume(group=GROUP, version=VERSION, plural=MIRRORMAKERS.plural)
@kopf.on.create(group=GROUP, version=VERSION, plural=MIRRORMAKERS.plural)
@kopf.on.update(group=GROUP, version=VERSION, plural=MIRRORMAKERS.plural)
def mirror_changed(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    MIRRORMAKERS.run(memo.context, body, logger)


@kopf.on.resume(group=GROUP, version=VERSION, plural=USERS.plural)
@kopf.on.create(group=GROUP, version=VERSION, plural=USERS.plural)
@kopf.on.update(group=GROUP, version=VERSION, plural=USERS.plural)
def user_changed(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    USERS.run(memo.context, body, logger)


@kopf.on.delete(group=GROUP, version=VERSION, plural=USERS.plural)
def user_deleted(body: kopf.Body, memo: kopf.Memo, logger: Log, **_: Any) -> None:
    delete_user(memo.context, body, logger)
