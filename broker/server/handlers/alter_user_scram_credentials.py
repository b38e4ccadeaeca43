"""AlterUserScramCredentials v0 (KIP-554): store or remove users' SCRAM credentials. The
client sends the salted password, never the password; the broker keeps only the salt,
StoredKey and ServerKey derived from it (see ``scram_alteration`` for how a request is
judged). Any broker takes the request: the store's compare-and-set orders concurrent
changes as Kafka's single controller would."""

from __future__ import annotations

from functools import partial
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage, ScramCredentialKey
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.security.scram_credential import ScramCredential
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error, error_of
from odradek.broker.server.scram_alteration import (
    Alteration,
    alterations_by_user,
    judged_change,
)

Changes = dict[ScramCredentialKey, ScramCredential | None]


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    by_user = alterations_by_user(request.body.deletions, request.body.upsertions)
    if not context.authorization.authorize_cluster(request, AclOperation.ALTER):
        denied = {"error_code": ErrorCode.cluster_authorization_failed, "error_message": None}
        return {"throttle_time": 0, "results": [{"user": user, **denied} for user in by_user]}
    while True:
        image = context.store.image
        changes: Changes = {}
        outcomes = {
            user: answer_or_error(partial(_judge, image, alterations, changes), {}, "error_message")
            for user, alterations in by_user.items()
        }
        try:
            if await _store(context.store, changes):
                break
        except Exception as error:  # the store failed, and with it every change it was given
            code, message = error_of(error)
            failed = {"error_code": code, "error_message": message}
            outcomes = {
                user: failed if outcome["error_code"] == ErrorCode.none else outcome
                for user, outcome in outcomes.items()
            }
            break
    results = [{"user": user, **outcome} for user, outcome in outcomes.items()]
    return {"throttle_time": 0, "results": results}


def _judge(image: MetadataImage, alterations: list[Alteration], changes: Changes) -> dict[str, Any]:
    key, credential = judged_change(image, alterations)
    changes[key] = credential
    return {}


async def _store(store: MetadataStore, changes: Changes) -> bool:
    """False when a credential to remove changed meanwhile: the request is judged again."""
    if not changes:
        return True
    upsertions = {key: c for key, c in changes.items() if c is not None}
    deletions = [key for key, c in changes.items() if c is None]
    return await store.alter_scram_credentials(upsertions, deletions)
