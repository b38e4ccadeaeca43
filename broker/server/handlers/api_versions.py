"""ApiVersions: the APIs and versions this broker speaks, and its feature levels (v3+).

The features advertised are ``metadata.version``, finalized at Kafka 4.0's level, and
``transaction.version`` 2 (KIP-890: clients end each transaction with a bumped epoch and
let partition leaders add partitions), as a Kafka 4.0 cluster finalizes them. Kafka
advertises a feature only where its highest level is above 0; the levels above 0 of
``group.version`` (KIP-848) and ``share.version`` (KIP-932) announce protocols Odradek does
not serve yet.
"""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext

METADATA_VERSION = "metadata.version"
TRANSACTION_VERSION = "transaction.version"
FEATURES = {  # name: (the lowest level supported, the finalized level)
    METADATA_VERSION: (7, 25),  # 3.3-IV3, the oldest Kafka 4.x supports; 4.0-IV3
    TRANSACTION_VERSION: (0, 2),
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
