"""ApiVersions: the APIs and versions this broker speaks, and its feature levels (v3+).

The features advertised are ``metadata.version``, finalized at Kafka 4.0's level,
``transaction.version`` 2 (KIP-890: clients end each transaction with a bumped epoch and
let partition leaders add partitions), ``group.version`` 1 (KIP-848's consumer group
protocol) and ``share.version`` 1 (KIP-932's share groups), as a Kafka 4.2 cluster
finalizes them.
"""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext

METADATA_VERSION = "metadata.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
SHARE_VERSION = "share.version"
FEATURES = {  # name: (the lowest level supported, the finalized level)
    METADATA_VERSION: (7, 25),  # 3.3-IV3, the oldest Kafka 4.x supports; 4.0-IV3
    TRANSACTION_VERSION: (0, 2),
    GROUP_VERSION: (0, 1),  # KIP-848: the consumer group protocol
    SHARE_VERSION: (0, 1),  # KIP-932: share groups
}


def api_versions_body(error: ErrorCode = ErrorCode.none) -> dict[str, Any]:
    from odradek.broker.server.handlers import API_HANDLERS  # the table imports this module

    return {
        "error_code": error,
        "api_keys": [
            {"api_key": key, "min_version": spec.min_version, "max_version": spec.max_version}
            for key, spec in sorted(API_HANDLERS.items())
        ],
        "throttle_time": 0,
        "supported_features": [
            {"name": name, "min_version": lowest, "max_version": level}
            for name, (lowest, level) in FEATURES.items()
        ],
        "finalized_features_epoch": 0,
        "finalized_features": [
            {"name": name, "min_version_level": level, "max_version_level": level}
            for name, (_, level) in FEATURES.items()
        ],
        "zk_migration_ready": False,
    }


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return api_versions_body()
