"""UpdateFeatures v0-2: Odradek finalizes each of its features at one level, so a request
for that level succeeds (as an upgrade to the current level does on Kafka) and any other
level, or any other feature, is refused with INVALID_UPDATE_VERSION and the reason."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.api_versions import FEATURES
from odradek.broker.server.handlers.errors import answer_or_error

TOP_LEVEL_ERRORS_FROM = 2  # v2 drops the per-feature results (KIP-1022)


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    allowed = context.authorization.authorize_cluster(request, AclOperation.ALTER)
    results = [_result(update, allowed) for update in request.body.feature_updates]
    failed = next((r for r in results if r["error_code"] != ErrorCode.none), None)
    if request.header.api_version >= TOP_LEVEL_ERRORS_FROM and failed is not None:
        top = {"error_code": failed["error_code"], "error_message": failed["error_message"]}
    else:
        top = {"error_code": ErrorCode.none, "error_message": None}
    return {"throttle_time": 0, **top, "results": results}


def _result(update: Any, allowed: bool) -> dict[str, Any]:
    return {
        "feature": update.feature,
        **answer_or_error(lambda: _check(update, allowed), {}, "error_message"),
    }


def _check(update: Any, allowed: bool) -> dict[str, Any]:
    if not allowed:
        raise KafkaError(ErrorCode.cluster_authorization_failed)
    if update.feature not in FEATURES:
        raise KafkaError(
            ErrorCode.invalid_update_version,
            f"Odradek has no feature {update.feature}: only {', '.join(FEATURES)} are finalized",
        )
    _, level = FEATURES[update.feature]
    if update.max_version_level != level:
        raise KafkaError(
            ErrorCode.invalid_update_version,
            f"{update.feature} is finalized at level {level} on Odradek and cannot change to"
            f" {update.max_version_level}",
        )
    return {}
