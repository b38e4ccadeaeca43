"""ApiVersions: the APIs and versions this broker speaks, and its feature levels (v3+).

The only feature advertised is ``metadata.version``, finalized at Kafka 4.0's level:
Kafka advertises a feature only where its highest level is above 0, and the levels
above 0 of ``transaction.version`` (KIP-890), ``group.version`` (KIP-848) and
``share.version`` (KIP-932) announce protocols Odradek does not serve yet.
"""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext

METADATA_VERSION = "metadata.version"
METADATA_VERSION_MIN = 7  # 3.3-IV3, the oldest level Kafka 4.x brokers support
METADATA_VERSION_LEVEL = 25  # 4.0-IV3


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
            {
                "name": METADATA_VERSION,
                "min_version": METADATA_VERSION_MIN,
                "max_version": METADATA_VERSION_LEVEL,
            }
        ],
        "finalized_features_epoch": 0,
        "finalized_features": [
            {
                "name": METADATA_VERSION,
                "min_version_level": METADATA_VERSION_LEVEL,
                "max_version_level": METADATA_VERSION_LEVEL,
            }
        ],
        "zk_migration_ready": False,
    }


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return api_versions_body()
