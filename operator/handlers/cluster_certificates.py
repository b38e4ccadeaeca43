"""A TLS Cluster's certificates, kept in Secrets it owns: the cluster CA (and, while it is
being replaced, the previous one), the CAs clients trust, every broker's key and
certificate, and the operator's client certificate; each made again when
planning/certificate_renewal says so. Brokers read theirs from a mounted Secret, which the
kubelet updates in place, and reload it."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..builders import names
from ..builders.certificates import KeyPair, broker_dns_names, issue, new_ca
from ..builders.meta import Obj, Owner, metadata
from ..constants import CA_CERT_KEY
from ..models import ClusterSpec
from ..planning.certificate_renewal import plan_ca, renewal_reason
from .context import Context, Log
from .kafka_admin import ClientTls

CA_KEY_KEY = "ca.key"
PREVIOUS_CA_KEY_KEY, PREVIOUS_CA_CERT_KEY = "previous-ca.key", "previous-ca.crt"
OPERATOR_COMMON_NAME = "odradek-operator"
TLS_CERT_KEY, TLS_KEY_KEY = "tls.crt", "tls.key"
_PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n?", re.DOTALL
)


def sync_certificates(ctx: Context, owner: Owner, spec: ClusterSpec, logger: Log) -> ClientTls:
    """Make or renew what is due; what the operator connects to the brokers with."""
    now = ctx.now()
    valid_for = timedelta(days=spec.cluster_ca.validity_days)
    renew_before = timedelta(days=spec.cluster_ca.renewal_days)
    stored_ca = _secret_data(ctx, owner, names.cluster_ca(owner.name))
    current = _pair(stored_ca, CA_KEY_KEY, CA_CERT_KEY)
    previous = _pair(stored_ca, PREVIOUS_CA_KEY_KEY, PREVIOUS_CA_CERT_KEY)
    plan = plan_ca(
        current.certificate if current else None,
        previous.certificate if previous else None,
        now,
        renew_before,
    )
    if plan.renew is not None or current is None:
        previous, current = current, new_ca(f"{owner.name}-cluster-ca", valid_for, now)
        expiry = current.certificate.not_valid_after_utc
        logger.info("made a new cluster CA (%s), valid until %s", plan.renew, expiry)
    elif plan.drop_previous:
        previous = None
        logger.info("the previous cluster CA expired: no longer trusted")
    ca_data = {CA_KEY_KEY: current.key_pem, CA_CERT_KEY: current.cert_pem}
    if previous is not None:
        ca_data |= {PREVIOUS_CA_KEY_KEY: previous.key_pem, PREVIOUS_CA_CERT_KEY: previous.cert_pem}
    _apply(ctx, owner, names.cluster_ca(owner.name), ca_data)
    # what brokers and clients trust: the current CA, and the previous one until it expires
    trusted = current.cert_pem + (previous.cert_pem if previous is not None else b"")
    _apply(ctx, owner, names.cluster_ca_cert(owner.name), {CA_CERT_KEY: trusted})
    signer = previous if plan.sign_with_previous and previous is not None else current
    # no certificate outlives the CA that signed it
    leaf_valid_for = min(valid_for, signer.certificate.not_valid_after_utc - now)

    def kept_or_issued(pem: bytes | None, common_name: str, dns_names: list[str]) -> KeyPair:
        """The key and certificate in ``pem`` if they may stay, else new ones (saying why)."""
        certificate = _certificate(pem)
        reason = renewal_reason(
            certificate, signer.certificate, dns_names, now, plan.leaf_renew_before
        )
        if reason is None and pem is not None and certificate is not None:
            return KeyPair(pem.replace(certificate, b""), certificate)
        logger.info("issuing %s a certificate: %s", common_name, reason)
        return issue(signer, common_name, dns_names, leaf_valid_for, now)

    stored = _secret_data(ctx, owner, names.broker_certs(owner.name))
    brokers: dict[str, bytes] = {CA_CERT_KEY: trusted}
    for broker in range(spec.replicas):
        pod = names.broker_pod(owner.name, broker)
        dns_names = broker_dns_names(owner.name, owner.namespace, broker)
        pair = kept_or_issued(stored.get(f"{pod}.pem"), pod, dns_names)
        brokers[f"{pod}.pem"] = pair.key_pem + pair.cert_pem
    _apply(ctx, owner, names.broker_certs(owner.name), brokers)

    stored = _secret_data(ctx, owner, names.operator_cert(owner.name))
    operator_pem = stored.get(TLS_KEY_KEY, b"") + stored.get(TLS_CERT_KEY, b"")
    mine = kept_or_issued(operator_pem or None, OPERATOR_COMMON_NAME, [])
    operator_data = {
        TLS_KEY_KEY: mine.key_pem,
        TLS_CERT_KEY: mine.cert_pem,
        CA_CERT_KEY: trusted,
    }
    _apply(ctx, owner, names.operator_cert(owner.name), operator_data)
    return ClientTls(trusted.decode(), mine.cert_pem.decode(), mine.key_pem.decode())


def operator_tls(ctx: Context, cluster: Mapping[str, Any]) -> ClientTls | None:
    """What the operator connects to ``cluster`` with, once its certificate exists."""
    meta = cluster["metadata"]
    secret = ctx.kube.get("v1", "Secret", names.operator_cert(meta["name"]), meta["namespace"])
    data = _decoded(secret)
    if not all(key in data for key in (CA_CERT_KEY, TLS_CERT_KEY, TLS_KEY_KEY)):
        return None
    return ClientTls(
        data[CA_CERT_KEY].decode(), data[TLS_CERT_KEY].decode(), data[TLS_KEY_KEY].decode()
    )


def _secret_data(ctx: Context, owner: Owner, name: str) -> dict[str, bytes]:
    return _decoded(ctx.kube.get("v1", "Secret", name, owner.namespace))


def _decoded(secret: Obj | None) -> dict[str, bytes]:
    data = (secret or {}).get("data") or {}
    return {key: base64.b64decode(value) for key, value in data.items()}


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
