"""One reconciliation pass over a User, and its deletion: its credential, ACLs and quotas
on the Cluster, and the Secret its clients read."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from ..builders import names
from ..builders.user_secret import (
    PASSWORD_KEY,
    USER_CERT_KEY,
    USER_KEY_KEY,
    Credential,
    Endpoint,
    user_secret,
)
from ..constants import CA_CERT_KEY
from ..models import ClusterSpec, UserSpec, UserStatus
from ..planning.conditions import failed, progressing, ready
from ..planning.user_access import (
    acl_changes,
    desired_acls,
    principal,
    quota_changes,
    user_listener,
)
from .cluster_address import cluster_admin, cluster_of
from .cluster_certificates import stored_authority
from .cluster_sync import owner_of
from .context import Context, Log
from .kafka_admin import KafkaAdmin, KafkaAdminError
from .kube import decoded_data, secret_data
from .report import report

PASSWORD_BYTES = 24
"""A generated password: 24 random bytes, 32 URL-safe characters."""


class UserNotReady(Exception):
    """Why the User cannot be applied yet (the reason, then a sentence)."""

    def __init__(self, reason: str, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.refused = refused


def sync_user(ctx: Context, body: Mapping[str, Any], logger: Log) -> dict[str, Any]:
    spec = UserSpec.model_validate(body["spec"])
    owner = owner_of(body)
    fields: dict[str, Any] = {"principal": principal(owner.name)}
    try:
        cluster = cluster_of(ctx, body)
        if cluster is None:
            message = f"Cluster {spec.cluster} does not exist in this namespace"
            raise UserNotReady("ClusterNotFound", message, refused=True)
        cluster_spec = ClusterSpec.model_validate(cluster.get("spec") or {})
        stored = _own_secret(ctx, body)
        credential = secret = None
        if spec.authentication is not None:
            endpoint = _endpoint(ctx, body, cluster_spec, spec.authentication.type)
            credential = _credential(ctx, body, cluster_spec, spec, stored, logger)
            secret = user_secret(owner, endpoint, credential)
        admin = cluster_admin(ctx, cluster)
        _apply_credential(admin, owner.name, credential, stored)
        changes = acl_changes(desired_acls(owner.name, spec), admin.acls(principal(owner.name)))
        admin.delete_acls(changes.delete)
        admin.create_acls(changes.create)
        desired = spec.quotas.kafka() if spec.quotas else {}
        admin.alter_user_quotas(owner.name, quota_changes(desired, admin.user_quotas(owner.name)))
    except UserNotReady as why:
        verdict = failed if why.refused else progressing
        return report(ctx, body, verdict(why.reason, str(why)), fields, UserStatus, logger)
    except KafkaAdminError as error:
        message = f"cluster {spec.cluster} is unavailable: {error}"
        verdicts = progressing("ClusterUnavailable", message)
        return report(ctx, body, verdicts, fields, UserStatus, logger)
    if secret is None:
        if stored:  # the credential the User had: gone with its authentication
            ctx.kube.delete("v1", "Secret", owner.name, owner.namespace)
        message = "ACLs and quotas applied (no credential: authenticated elsewhere)"
        return report(ctx, body, ready("Applied", message), fields, UserStatus, logger)
    ctx.kube.apply(secret)
    fields["secret"] = owner.name
    message = f"credential, ACLs and quotas applied; clients read Secret {owner.name}"
    return report(ctx, body, ready("Applied", message), fields, UserStatus, logger)


def delete_user(ctx: Context, body: Mapping[str, Any], logger: Log) -> None:
    """Revoke the credential, ACLs and quotas; never blocks when the Cluster is gone."""
    name = body["metadata"]["name"]
    cluster = cluster_of(ctx, body)
    if cluster is None:
        logger.info("Cluster %s is gone; user %s goes with it", body["spec"]["cluster"], name)
        return
    admin = cluster_admin(ctx, cluster)
    admin.delete_scram(name, admin.scram_mechanisms(name))
    admin.delete_acls(admin.acls(principal(name)))
    admin.alter_user_quotas(name, dict.fromkeys(admin.user_quotas(name)))


def _endpoint(
    ctx: Context, body: Mapping[str, Any], cluster: ClusterSpec, authentication: str
) -> Endpoint:
    meta = body["metadata"]
    name = body["spec"]["cluster"]
    listener = user_listener(cluster, authentication)
    if listener is None:
        message = f"Cluster {name} has no listener with {authentication} authentication"
        raise UserNotReady("NoListener", message, refused=True)
    ca_pem = None
    if listener.tls:
        trusted = secret_data(ctx.kube, names.cluster_ca_cert(name), meta["namespace"])
        if CA_CERT_KEY not in trusted:
            raise UserNotReady("WaitingForCertificates", "the cluster CA is not made yet")
        ca_pem = trusted[CA_CERT_KEY]
    bootstrap = names.bootstrap_servers(name, meta["namespace"], listener.port)
    assert listener.authentication is not None
    mechanism = listener.authentication.sasl_mechanism
    return Endpoint(bootstrap, listener.security_protocol, mechanism, ca_pem)


def _credential(
    ctx: Context,
    body: Mapping[str, Any],
    cluster: ClusterSpec,
    spec: UserSpec,
    stored: Mapping[str, bytes],
    logger: Log,
) -> Credential:
    """The User's password (referenced, kept or new) or certificate (kept or issued)."""
    authentication = spec.authentication
    assert authentication is not None
    mechanism = authentication.sasl_mechanism
    if mechanism is not None:
        return Credential(mechanism, password=_password(ctx, body, spec, stored))
    owner = owner_of(body)
    clients_ca = stored_authority(
        ctx, owner.namespace, names.clients_ca(spec.cluster), cluster.clients_ca
    )
    if clients_ca is None:
        raise UserNotReady("WaitingForCertificates", "the clients CA is not made yet")
    kept = stored.get(USER_KEY_KEY, b"") + stored.get(USER_CERT_KEY, b"")
    pair = clients_ca.kept_or_issued(kept or None, owner.name, [], ctx.now(), logger)
    return Credential(key_pem=pair.key_pem, cert_pem=pair.cert_pem)


def _password(
    ctx: Context, body: Mapping[str, Any], spec: UserSpec, stored: Mapping[str, bytes]
) -> str:
    assert spec.authentication is not None
    source = spec.authentication.password
    if source is None:
        kept = stored.get(PASSWORD_KEY)
        return kept.decode() if kept else secrets.token_urlsafe(PASSWORD_BYTES)
    ref = source.value_from.secret_key_ref
    value = secret_data(ctx.kube, ref.name, body["metadata"]["namespace"]).get(ref.key)
    if not value:
        message = f"authentication.password: Secret {ref.name} has no key {ref.key}"
        raise UserNotReady("PasswordNotFound", message, refused=True)
    return value.decode()


def _apply_credential(
    admin: KafkaAdmin, user: str, credential: Credential | None, stored: Mapping[str, bytes]
) -> None:
    """Set the password when it is not the one in the User's Secret or the cluster lacks
    it; drop every other SCRAM credential of the User."""
    held = admin.scram_mechanisms(user)
    mechanism = credential.mechanism if credential is not None else None
    if credential is not None and mechanism is not None and credential.password is not None:
        applied = stored.get(PASSWORD_KEY)
        changed = applied is None or applied.decode() != credential.password
        if changed or mechanism not in held:
            admin.set_scram_password(user, mechanism, credential.password)
    admin.delete_scram(user, held - {mechanism} if mechanism else held)


def _own_secret(ctx: Context, body: Mapping[str, Any]) -> dict[str, bytes]:
    """The data of the User's Secret; refused when a Secret of that name is someone else's."""
    meta = body["metadata"]
    secret = ctx.kube.get("v1", "Secret", meta["name"], meta["namespace"])
    if secret is None:
        return {}
    owners = secret["metadata"].get("ownerReferences") or []
    if not any(reference.get("uid") == meta["uid"] for reference in owners):
        message = f"Secret {meta['name']} exists and belongs to something else; not replaced"
        raise UserNotReady("SecretConflict", message, refused=True)
    return decoded_data(secret)
