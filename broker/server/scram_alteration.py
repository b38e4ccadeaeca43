"""AlterUserScramCredentials judged as Kafka's controller judges it (``ScramControlManager``
in Kafka 4.x): each user named is judged alone, on the first of their alterations, and
may be altered only once per request. A second alteration of a user, even for the other
mechanism, is DUPLICATE_RESOURCE, so a Kafka 4 broker refuses
``kafka-configs --add-config 'SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]'`` and so does this.
The changes of the users that pass are stored together.
"""

from __future__ import annotations

from collections.abc import Iterable

from kio.schema.alter_user_scram_credentials.v0.request import (
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)

from odradek.broker.cluster.metadata_image import MetadataImage, ScramCredentialKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.scram_credential import (
    ScramCredential,
    ScramMechanism,
    UnacceptableCredential,
    credential_from_salted_password,
)

Alteration = ScramCredentialDeletion | ScramCredentialUpsertion
CredentialChange = tuple[ScramCredentialKey, ScramCredential | None]
"""A credential to store under its key, or None to remove the one stored there."""


def alterations_by_user(
    deletions: Iterable[ScramCredentialDeletion], upsertions: Iterable[ScramCredentialUpsertion]
) -> dict[str, list[Alteration]]:
    """Each user named, with their alterations in the order Kafka judges them: deletions
    first, then upsertions, each in request order."""
    in_order: list[Alteration] = [*deletions, *upsertions]
    by_user: dict[str, list[Alteration]] = {}
    for alteration in in_order:
        by_user.setdefault(alteration.name, []).append(alteration)
    return by_user


def judged_change(image: MetadataImage, alterations: list[Alteration]) -> CredentialChange:
    """What one user's alterations change; raises KafkaError with Kafka's code and message
    when they are refused."""
    first = alterations[0]
    if not first.name:
        raise UnacceptableCredential("Username must not be empty")
    mechanism = ScramMechanism.from_wire_type(first.mechanism)
    if mechanism is None:
        raise KafkaError(ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
    key = (first.name, mechanism)
    if isinstance(first, ScramCredentialDeletion) and key not in image.scram_credentials:
        raise KafkaError(
            ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist"
        )
    credential = None
    if isinstance(first, ScramCredentialUpsertion):
        credential = credential_from_salted_password(
            mechanism, salt=first.salt, salted=first.salted_password, iterations=first.iterations
        )
    if len(alterations) > 1:
        raise KafkaError(
            ErrorCode.duplicate_resource,
            "A user credential cannot be altered twice in the same request",
        )
    return key, credential
