"""Level-triggered reconciliation without kopf timers.

kopf timers put a finalizer on every resource they watch, which leaves
namespaces stuck in Terminating when the operator is gone. A single loop
revisits every resource instead; kopf's change handlers give the fast path.
"""

from __future__ import annotations

import asyncio
import logging
import os

from ..constants import API_VERSION
from .context import Context
from .metrics import RESOURCES
from .node_reader_cleanup import prune_node_reader_bindings
from .resources import SERVED

INTERVAL_SECONDS = float(os.environ.get("ODRADEK_OPERATOR_RESYNC_SECONDS", "10"))
logger = logging.getLogger(__name__)


def resync_once(ctx: Context, namespaces: tuple[str, ...]) -> None:
    """One pass over every served resource; one resource's failure does not stop the rest."""
    for served in SERVED:
        bodies = [
            body
            for namespace in namespaces or (None,)
            for body in ctx.kube.list(API_VERSION, served.kind, namespace, {})
        ]
        RESOURCES.labels(served.kind).set(len(bodies))
        for body in bodies:
            if body["metadata"].get("deletionTimestamp"):
                continue
            try:
                served.run(ctx, body, logger)
            except Exception:
                logger.exception(
                    "%s %s/%s: reconciliation failed",
                    served.kind,
                    body["metadata"]["namespace"],
                    body["metadata"]["name"],
                )
    for name in prune_node_reader_bindings(ctx.kube, namespaces):
        logger.info("ClusterRoleBinding %s: its Cluster is gone, deleted", name)


async def resync_forever(ctx: Context, namespaces: tuple[str, ...]) -> None:
    while True:
        await asyncio.to_thread(resync_once, ctx, namespaces)
        await asyncio.sleep(INTERVAL_SECONDS)
