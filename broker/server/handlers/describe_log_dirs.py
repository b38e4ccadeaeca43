"""DescribeLogDirs v1-5: each of this broker's log directories, the replicas it holds
(and the copies of replicas moving into it, as future replicas) with their sizes and
offset lag, and its total and usable bytes (v4+). No directory is cordoned (v5, KIP-1066).
A directory an I/O error took offline is answered with KAFKA_STORAGE_ERROR, no replicas and
unknown sizes (-1), as Kafka answers it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from odradek.broker.cluster.partition import ReplicaInLogDir
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    if not context.authorization.authorize_cluster(request, AclOperation.DESCRIBE):
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.cluster_authorization_failed,
            "results": [],
        }
    topics = request.body.topics
    wanted = None if topics is None else {t.topic: set(t.partitions) for t in topics}
    held: dict[Path, dict[str, list[dict[str, Any]]]] = {d: {} for d in context.replicas.log_dirs}
    for partition in sorted(context.replicas, key=lambda p: (p.key.topic, p.key.partition)):
        key = partition.key
        if wanted is not None and key.partition not in wanted.get(key.topic, ()):
            continue
        for replica in partition.log_dirs():
            by_topic = held.setdefault(replica.log_dir, {})
            by_topic.setdefault(key.topic, []).append(_entry(key.partition, replica))
    offline = context.replicas.offline_log_dirs
    results = [
        _offline(log_dir) if log_dir in offline else _result(log_dir, by_topic)
        for log_dir, by_topic in held.items()
    ]
    return {"throttle_time": 0, "error_code": ErrorCode.none, "results": results}


def _entry(partition: int, replica: ReplicaInLogDir) -> dict[str, Any]:
    return {
        "partition_index": partition,
        "partition_size": replica.size_bytes,
        "offset_lag": replica.offset_lag,
        "is_future_key": replica.is_future,
    }


def _result(log_dir: Path, by_topic: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    usage = os.statvfs(log_dir)
    return {
        "error_code": ErrorCode.none,
        "log_dir": str(log_dir),
        "topics": [{"name": name, "partitions": items} for name, items in by_topic.items()],
        "total_bytes": usage.f_blocks * usage.f_frsize,
        "usable_bytes": usage.f_bavail * usage.f_frsize,
        "is_cordoned": False,
    }


def _offline(log_dir: Path) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.kafka_storage_error,
        "log_dir": str(log_dir),
        "topics": [],
        "total_bytes": -1,
        "usable_bytes": -1,
        "is_cordoned": False,
    }
