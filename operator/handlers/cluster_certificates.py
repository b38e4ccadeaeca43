"""A secured Cluster's certificates, kept in Secrets it owns: the cluster CA and the clients
CA (each, while it is being replaced, with the previous one), the CAs clients and brokers
trust, every broker's key and certificate, and the operator's client certificate; each
made again when planning/certificate_renewal says so. Brokers read theirs from a mounted
Secret, which the kubelet updates in place, and reload it."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from ..builders import names
from ..builders.certificates import KeyPair, broker_dns_names, issue, new_ca
from ..builders.meta import Owner, metadata
from ..constants import CA_CERT_KEY, CLIENTS_CA_CERT_KEY
from ..models import ClusterSpec
from ..models.cluster import CertificateAuthority
from ..planning.certificate_renewal import CaPlan, plan_ca, renewal_reason
from .context import Context, Log
from .kafka_admin import ClientTls
from .kube import decoded_data, secret_data

CA_KEY_KEY = "ca.key"
PREVIOUS_CA_KEY_KEY, PREVIOUS_CA_CERT_KEY = "previous-ca.key", "previous-ca.crt"
OPERATOR_COMMON_NAME = "odradek-operator"
TLS_CERT_KEY, TLS_KEY_KEY = "tls.crt", "tls.key"
_PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n?", re.DOTALL
)


@dataclass(frozen=True)
class Authority:
    """A CA as this pass leaves it: the current key pair, the previous one while it is still
    trusted, and which of them signs certificates now."""

    current: KeyPair
    previous: KeyPair | None
    plan: CaPlan
    validity: timedelta
    """How long a certificate it issues is valid (never beyond the signer's own expiry)."""

    @property
    def trusted(self) -> bytes:
        """What clients and brokers trust: the current CA, and the previous until it expires."""
        return self.current.cert_pem + (self.previous.cert_pem if self.previous else b"")

    @property
    def signer(self) -> KeyPair:
        if self.plan.sign_with_previous and self.previous is not None:
            return self.previous
        return self.current

    def kept_or_issued(
        self,
        pem: bytes | None,
        common_name: str,
        dns_names: list[str],
        now: datetime,
        logger: Log,
    ) -> KeyPair:
        """The key and certificate in ``pem`` if they may stay, else new ones (saying why);
        no certificate outlives the CA that signed it."""
        certificate = _certificate(pem)
        signer = self.signer.certificate
        reason = renewal_reason(certificate, signer, dns_names, now, self.plan.leaf_renew_before)
        if reason is None and pem is not None and certificate is not None:
            return KeyPair(pem.replace(certificate, b""), certificate)
        logger.info("issuing %s a certificate: %s", common_name, reason)
        valid_for = min(self.validity, signer.not_valid_after_utc - now)
        return issue(self.signer, common_name, dns_names, valid_for, now)


def sync_certificates(
    ctx: Context,
    owner: Owner,
    spec: ClusterSpec,
    logger: Log,
    addresses: Mapping[int, list[str]] | None = None,
) -> ClientTls:
    """Make or renew what is due; what the operator connects to the brokers with. A broker
    with addresses in ``addresses`` (its node's, its load balancers': where external
    clients reach it) has them in its certificate too."""
    now = ctx.now()
    cluster_ca = _sync_ca(ctx, owner, _CLUSTER_CA, spec.cluster_ca, logger)
    clients_ca = _sync_ca(ctx, owner, _CLIENTS_CA, spec.clients_ca, logger)
    stored = secret_data(ctx.kube, names.broker_certs(owner.name), owner.namespace)
    brokers: dict[str, bytes] = {
        CA_CERT_KEY: cluster_ca.trusted,
        CLIENTS_CA_CERT_KEY: clients_ca.trusted,
    }
    for broker in range(spec.replicas):
        pod = names.broker_pod(owner.name, broker)
        dns_names = broker_dns_names(owner.name, owner.namespace, broker)
        if addresses:
            dns_names += addresses.get(broker, [])
        pair = cluster_ca.kept_or_issued(stored.get(f"{pod}.pem"), pod, dns_names, now, logger)
        brokers[f"{pod}.pem"] = pair.key_pem + pair.cert_pem
    _apply(ctx, owner, names.broker_certs(owner.name), brokers)
    if spec.coordination.managed is not None:
        members = spec.coordination.managed.replicas
        _sync_etcd_certificates(ctx, owner, cluster_ca, members, logger)

    stored = secret_data(ctx.kube, names.operator_cert(owner.name), owner.namespace)
    operator_pem = stored.get(TLS_KEY_KEY, b"") + stored.get(TLS_CERT_KEY, b"")
    mine = cluster_ca.kept_or_issued(operator_pem or None, OPERATOR_COMMON_NAME, [], now, logger)
    operator_data = {
        TLS_KEY_KEY: mine.key_pem,
        TLS_CERT_KEY: mine.cert_pem,
        CA_CERT_KEY: cluster_ca.trusted,
    }
    _apply(ctx, owner, names.operator_cert(owner.name), operator_data)
    return ClientTls(cluster_ca.trusted.decode(), mine.cert_pem.decode(), mine.key_pem.decode())


def _sync_etcd_certificates(
    ctx: Context, owner: Owner, cluster_ca: Authority, members: int, logger: Log
) -> None:
    """Each managed etcd member's key and certificate, for its client and peer URLs."""
    stored = secret_data(ctx.kube, names.etcd_certs(owner.name), owner.namespace)
    data: dict[str, bytes] = {CA_CERT_KEY: cluster_ca.trusted}
    for index in range(members):
        member = names.etcd_member(owner.name, index)
        host = names.etcd_host(owner.name, owner.namespace, index)
        dns_names = [host, f"{host}.cluster.local", "localhost"]
        kept = stored.get(f"{member}.key", b"") + stored.get(f"{member}.crt", b"")
        pair = cluster_ca.kept_or_issued(kept or None, member, dns_names, ctx.now(), logger)
        data |= {f"{member}.key": pair.key_pem, f"{member}.crt": pair.cert_pem}
    _apply(ctx, owner, names.etcd_certs(owner.name), data)


@dataclass(frozen=True)
class _CaSecrets:
    kind: str
    """cluster or clients: in the CA's common name and in what the log says."""
    key_secret: Callable[[str], str]
    """The Secret with the CA's key and certificate (the operator's alone)."""
    cert_secret: Callable[[str], str]
    """The Secret with the trusted certificates: what clients read."""


_CLUSTER_CA = _CaSecrets("cluster", names.cluster_ca, names.cluster_ca_cert)
_CLIENTS_CA = _CaSecrets("clients", names.clients_ca, names.clients_ca_cert)


class MissingCertificateAuthority(Exception):
    """A CA the user brings (generateCertificateAuthority: false) is not there."""


def _sync_ca(
    ctx: Context, owner: Owner, secrets: _CaSecrets, spec: CertificateAuthority, logger: Log
) -> Authority:
    """The CA, made or renewed if due (unless the user brings it), and its Secrets written."""
    now = ctx.now()
    validity = timedelta(days=spec.validity_days)
    key_secret = secrets.key_secret(owner.name)
    authority = stored_authority(ctx, owner.namespace, key_secret, spec)
    if not spec.generate_certificate_authority:
        if authority is None:
            raise MissingCertificateAuthority(
                f"{secrets.kind}Ca.generateCertificateAuthority is false: waiting for Secret"
                f" {key_secret} with {CA_KEY_KEY} and {CA_CERT_KEY}"
            )
        plan = authority.plan
        if plan.renew is not None:  # the user's to replace: it signs on meanwhile
            logger.warning("%s CA of Secret %s: %s", secrets.kind, key_secret, plan.renew)
            plan = replace(plan, renew=None, sign_with_previous=False)
        previous = None if plan.drop_previous else authority.previous
        authority = Authority(authority.current, previous, plan, validity)
    elif authority is None or authority.plan.renew is not None:
        current = new_ca(f"{owner.name}-{secrets.kind}-ca", validity, now)
        if authority is None:
            plan = plan_ca(None, None, now, timedelta(days=spec.renewal_days))
            authority = Authority(current, None, plan, validity)
        else:
            plan = authority.plan
            authority = Authority(current, authority.current, plan, validity)
        expiry = current.certificate.not_valid_after_utc
        logger.info("made a new %s CA (%s), valid until %s", secrets.kind, plan.renew, expiry)
    elif authority.plan.drop_previous:
        logger.info("the previous %s CA expired: no longer trusted", secrets.kind)
        authority = Authority(authority.current, None, authority.plan, validity)
    if spec.generate_certificate_authority:
        data = {CA_KEY_KEY: authority.current.key_pem, CA_CERT_KEY: authority.current.cert_pem}
        if authority.previous is not None:
            data |= {
                PREVIOUS_CA_KEY_KEY: authority.previous.key_pem,
                PREVIOUS_CA_CERT_KEY: authority.previous.cert_pem,
            }
        _apply(ctx, owner, key_secret, data)
    _apply(ctx, owner, secrets.cert_secret(owner.name), {CA_CERT_KEY: authority.trusted})
    return authority


def stored_authority(
    ctx: Context, namespace: str, key_secret: str, spec: CertificateAuthority
) -> Authority | None:
    """The CA kept in the Secret ``key_secret`` of ``namespace``, with what is due for it
    now; None before there is one."""
    stored = secret_data(ctx.kube, key_secret, namespace)
    current = _pair(stored, CA_KEY_KEY, CA_CERT_KEY)
    if current is None:
        return None
    previous = _pair(stored, PREVIOUS_CA_KEY_KEY, PREVIOUS_CA_CERT_KEY)
    plan = plan_ca(
        current.certificate,
        previous.certificate if previous else None,
        ctx.now(),
        timedelta(days=spec.renewal_days),
    )
    return Authority(current, previous, plan, timedelta(days=spec.validity_days))


def operator_tls(ctx: Context, cluster: Mapping[str, Any]) -> ClientTls | None:
    """What the operator connects to ``cluster`` with, once its certificate exists."""
    meta = cluster["metadata"]
    secret = ctx.kube.get("v1", "Secret", names.operator_cert(meta["name"]), meta["namespace"])
    data = decoded_data(secret)
    if not all(key in data for key in (CA_CERT_KEY, TLS_CERT_KEY, TLS_KEY_KEY)):
        return None
    return ClientTls(
        data[CA_CERT_KEY].decode(), data[TLS_CERT_KEY].decode(), data[TLS_KEY_KEY].decode()
    )


def _pair(data: Mapping[str, bytes], key: str, cert: str) -> KeyPair | None:
    if key not in data or cert not in data:
        return None
    return KeyPair(data[key], data[cert])


def _certificate(pem: bytes | None) -> bytes | None:
    """The certificate of a key-and-certificate PEM file."""
    found = _PEM_CERTIFICATE.search(pem or b"")
    return found.group(0) if found else None


def _apply(ctx: Context, owner: Owner, name: str, data: Mapping[str, bytes]) -> None:
    ctx.kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": metadata(owner, name, "certificates"),
            "type": "Opaque",
            "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
        }
    )
