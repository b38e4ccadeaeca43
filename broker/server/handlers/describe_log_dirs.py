"""DescribeLogDirs v1-5: this broker's log directory, the replicas it holds there with
their sizes and offset lag, and the directory's total and usable bytes (v4+).

Odradek keeps every replica in one directory (``log.dirs``), so there is one result,
never a future replica, and the directory is never cordoned (v5, KIP-1066).
"""

from __future__ import annotations

import os
from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    topics = request.body.topics
    wanted = None if topics is None else {t.topic: set(t.partitions) for t in topics}
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for partition in sorted(context.replicas, key=lambda p: (p.key.topic, p.key.partition)):
        key = partition.key
        if wanted is not None and key.partition not in wanted.get(key.topic, ()):
            continue
        by_topic.setdefault(key.topic, []).append(
            {
                "partition_index": key.partition,
                "partition_size": partition.size_bytes,
                "offset_lag": partition.offset_lag,
                "is_future_key": False,
            }
        )
    directory = context.config.data_dir.resolve()
    usage = os.statvfs(directory)
    result = {
        "error_code": ErrorCode.none,
        "log_dir": str(directory),
        "topics": [{"name": name, "partitions": items} for name, items in by_topic.items()],
        "total_bytes": usage.f_blocks * usage.f_frsize,
        "usable_bytes": usage.f_bavail * usage.f_frsize,
        "is_cordoned": False,
    }
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results": [result]}
