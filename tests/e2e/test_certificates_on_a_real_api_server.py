"""The operator's certificate pass against a real API server, on a clock the test moves
through a year: the cluster CA and every certificate are made once and kept, the CA is
renewed ahead of its expiry while the old one stays trusted and goes on signing for half
the renewal window, then the certificates are issued again by the new CA, and the old CA
is dropped once it has expired. At no point is a certificate in use signed by a CA that
was not already in the trusted bundle clients read."""

from __future__ import annotations

import base64
import datetime
import logging
import re
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from e2e_kubectl import Kubectl

from odradek.operator.builders.meta import Owner
from odradek.operator.handlers.cluster_certificates import (
    MissingCertificateAuthority,
    sync_certificates,
)
from odradek.operator.handlers.cluster_sync import owner_of
from odradek.operator.handlers.confluent_admin import ConfluentAdmin
from odradek.operator.handlers.context import Context
from odradek.operator.handlers.kafka_admin import ClientTls
from odradek.operator.handlers.kube import ApiKube
from odradek.operator.models import ClusterSpec

pytestmark = pytest.mark.slow

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)
CLUSTER = {
    "apiVersion": "odradek.io/v1alpha1",
    "kind": "Cluster",
    "metadata": {"name": "events"},
    "spec": {
        "replicas": 2,
        "listeners": [{"name": "TLS", "port": 9093, "tls": True}],
        "clusterCa": {"validityDays": 365, "renewalDays": 30},
    },
}
LOGGER = logging.getLogger("certificates")
PEM = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", re.DOTALL)


def certificates(pem: bytes) -> list[x509.Certificate]:
    return [x509.load_pem_x509_certificate(block) for block in PEM.findall(pem)]


def secret(kubectl: Kubectl, namespace: str, name: str) -> dict[str, bytes]:
    found = kubectl.get(namespace, "secret", name)
    assert found is not None, name
    return {key: base64.b64decode(value) for key, value in found["data"].items()}


@dataclass
class Passes:
    """Certificate passes over one Cluster, on a clock the test sets."""

    owner: Owner
    spec: ClusterSpec
    clock: list[datetime.datetime]
    context: Context

    def run(self, when: datetime.datetime) -> ClientTls:
        self.clock[0] = when
        return sync_certificates(self.context, self.owner, self.spec, LOGGER)


def passes_over(
    kubectl: Kubectl, namespace: str, monkeypatch: pytest.MonkeyPatch, cluster: dict[str, Any]
) -> Passes:
    """``cluster`` made on the API server, and passes over it with the operator's client."""
    if kubectl.kubeconfig is not None:  # the session's own API server, else KUBECONFIG's
        monkeypatch.setenv("KUBECONFIG", str(kubectl.kubeconfig))
    kubectl.apply(namespace, cluster)
    body = kubectl.get(namespace, "clusters.odradek.io", cluster["metadata"]["name"])
    assert body is not None
    clock = [T0]
    context = Context(ApiKube(), ConfluentAdmin, now=lambda: clock[0])
    return Passes(owner_of(body), ClusterSpec.model_validate(body["spec"]), clock, context)


def test_the_cluster_ca_is_renewed_without_a_certificate_clients_do_not_trust(
    kubectl: Kubectl, crds: None, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes = passes_over(kubectl, namespace, monkeypatch, CLUSTER)
    owner = passes.owner

    def at(when: datetime.datetime) -> tuple[list[x509.Certificate], dict[str, x509.Certificate]]:
        """A pass at ``when``: the trusted CAs, and the certificates in use by name."""
        tls = passes.run(when)
        trusted = certificates(secret(kubectl, namespace, "events-cluster-ca-cert")["ca.crt"])
        assert certificates(tls.ca_pem.encode()) == trusted
        brokers = secret(kubectl, namespace, "events-broker-certs")
        assert certificates(brokers["ca.crt"]) == trusted
        in_use = {
            name: certificates(pem)[0] for name, pem in brokers.items() if name.endswith(".pem")
        }
        in_use["operator"] = certificates(tls.cert_pem.encode())[0]
        for name, certificate in in_use.items():  # each verifies against a trusted CA
            assert any(_signed_by(certificate, ca) for ca in trusted), name
        return trusted, in_use

    [ca], first = at(T0)
    assert sorted(first) == ["events-broker-0.pem", "events-broker-1.pem", "operator"]
    assert ca.not_valid_after_utc == T0 + 365 * DAY
    for owned in ("events-cluster-ca", "events-cluster-ca-cert", "events-broker-certs"):
        found = kubectl.get(namespace, "secret", owned)
        assert found is not None and found["metadata"]["ownerReferences"][0]["uid"] == owner.uid

    assert at(T0 + 100 * DAY) == ([ca], first)  # nothing due: nothing changes

    # 30 days ahead: a new CA, trusted beside the old one, which still signs
    trusted, renewing = at(T0 + 336 * DAY)
    assert len(trusted) == 2 and trusted[1] == ca
    new_ca = trusted[0]
    assert renewing == first

    # after half the window the certificates come from the new CA
    trusted, renewed = at(T0 + 351 * DAY)
    assert trusted == [new_ca, ca]
    assert all(_signed_by(c, new_ca) for c in renewed.values())
    assert all(renewed[name].serial_number != first[name].serial_number for name in first)

    # the old CA has expired: no longer trusted, no longer kept
    trusted, kept = at(T0 + 366 * DAY)
    assert trusted == [new_ca] and kept == renewed
    assert set(secret(kubectl, namespace, "events-cluster-ca")) == {"ca.key", "ca.crt"}


def _signed_by(certificate: x509.Certificate, ca: x509.Certificate) -> bool:
    try:
        certificate.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def test_a_ca_the_user_brings_signs_the_certificates_and_is_never_replaced(
    kubectl: Kubectl,
    crds: None,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """generateCertificateAuthority: false. Without the user's Secret nothing is issued
    and the pass says what it waits for; with it (an RSA CA without a subject key
    identifier, as other tools make them) every certificate comes from it, once, and the
    Secret is left as the user wrote it, also when the CA is about to expire."""
    cluster = {
        **CLUSTER,
        "spec": {
            **CLUSTER["spec"],
            "clusterCa": {"generateCertificateAuthority": False, "renewalDays": 30},
        },
    }
    passes = passes_over(kubectl, namespace, monkeypatch, cluster)
    with pytest.raises(MissingCertificateAuthority, match="waiting for Secret events-cluster-ca"):
        passes.run(T0)
    assert kubectl.get(namespace, "secret", "events-broker-certs") is None

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "corporate-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(T0 - DAY)
        .not_valid_after(T0 + 200 * DAY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    brought = {
        "ca.key": key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ),
        "ca.crt": ca.public_bytes(serialization.Encoding.PEM),
    }
    kubectl.apply(
        namespace,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "events-cluster-ca"},
            "data": {k: base64.b64encode(v).decode() for k, v in brought.items()},
        },
    )

    def issued_at(when: datetime.datetime) -> dict[str, x509.Certificate]:
        passes.run(when)
        brokers = secret(kubectl, namespace, "events-broker-certs")
        assert certificates(brokers["ca.crt"]) == [ca]
        return {n: certificates(pem)[0] for n, pem in brokers.items() if n.endswith(".pem")}

    first = issued_at(T0)
    assert sorted(first) == ["events-broker-0.pem", "events-broker-1.pem"]
    assert all(_signed_by(certificate, ca) for certificate in first.values())
    assert issued_at(T0 + DAY) == first  # kept: recognised as the CA's own
    # within renewalDays of the CA's expiry: said, and the certificates (which already last
    # as long as the CA) are kept
    assert issued_at(T0 + 180 * DAY) == first
    assert "within the renewal window" in caplog.text
    stored = kubectl.get(namespace, "secret", "events-cluster-ca")
    assert stored is not None and "ownerReferences" not in stored["metadata"]
    assert secret(kubectl, namespace, "events-cluster-ca") == brought
    assert certificates(secret(kubectl, namespace, "events-cluster-ca-cert")["ca.crt"]) == [ca]
