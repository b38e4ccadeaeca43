"""DescribeUserScramCredentials v0 (KIP-554): which SCRAM mechanisms each user has, with
their iteration counts, and nothing of the credentials themselves. Answered from this
broker's image, as a Kafka 4.x broker answers from its metadata cache (``ScramImage``)."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    if not context.authorization.authorize_cluster(request, AclOperation.DESCRIBE):
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": "", "results": []}  # fmt: skip
    image = context.store.image
    named = Counter(user.name for user in request.body.users or ())
    users = named or dict.fromkeys(image.scram_users, 1)  # none named (null or empty): all
    results = [
        {
            "user": user,
            **answer_or_error(
                partial(_describe, image, user, count), {"credential_infos": []}, "error_message"
            ),
        }
        for user, count in users.items()
    ]
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": "",  # Kafka's answer carries its schema's default, not null
        "results": results,
    }


def _describe(image: MetadataImage, user: str, count: int) -> dict[str, Any]:
    if count > 1:
        raise KafkaError(
            ErrorCode.duplicate_resource,
            "Cannot describe SCRAM credentials for the same user twice in a single request: "
            + user,
        )
    credentials = image.scram_users.get(user)
    if credentials is None:
        raise KafkaError(
            ErrorCode.resource_not_found,
            f"Attempt to describe a user credential that does not exist: {user}",
        )
    infos = [{"mechanism": c.mechanism.wire_type, "iterations": c.iterations} for c in credentials]
    return {"credential_infos": infos, "error_message": ""}
