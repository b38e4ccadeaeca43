"""The certificates the operator issues, and when it issues them again."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from odradek.operator.builders.certificates import broker_dns_names, issue, new_ca
from odradek.operator.planning.certificate_renewal import CaPlan, plan_ca, renewal_reason

NOW = datetime.datetime(2026, 11, 25, 12, 0, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


def test_the_ca_signs_leaf_certificates_for_servers_and_clients() -> None:
    ca = new_ca("events-cluster-ca", 365 * DAY, NOW)
    constraints = ca.certificate.extensions.get_extension_for_class(x509.BasicConstraints).value
    assert constraints.ca and constraints.path_length == 0
    assert ca.certificate.not_valid_after_utc == NOW + 365 * DAY

    names = broker_dns_names("events", "prod", 2)
    leaf = issue(ca, "events-broker-2", names, 30 * DAY, NOW).certificate
    leaf.verify_directly_issued_by(ca.certificate)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == names
    usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert set(usages) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}
    assert leaf.not_valid_before_utc < NOW < leaf.not_valid_after_utc == NOW + 30 * DAY


def test_an_address_is_named_as_an_ip_address_and_kept_while_it_is_the_same() -> None:
    ca = new_ca("ca", 365 * DAY, NOW)
    names = ["b.svc", "10.1.2.3"]
    leaf = issue(ca, "b", names, 30 * DAY, NOW)
    sans = leaf.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert [str(a) for a in sans.value.get_values_for_type(x509.IPAddress)] == ["10.1.2.3"]
    assert renewal_reason(leaf.cert_pem, ca.certificate, names, NOW, DAY) is None
    moved = ["b.svc", "10.1.2.4"]
    assert renewal_reason(leaf.cert_pem, ca.certificate, moved, NOW, DAY) == "its names changed"


def test_a_broker_is_named_as_it_advertises_itself_and_as_the_bootstrap_service() -> None:
    names = broker_dns_names("events", "prod", 0)
    assert "events-broker-0.events-brokers.prod.svc" in names
    assert "events-bootstrap.prod.svc" in names
    assert "events-bootstrap" in names


@pytest.mark.parametrize(
    ("days_later", "names", "other_ca", "reason"),
    [
        (0, ["b.svc"], False, None),
        (59, ["b.svc"], False, None),
        (61, ["b.svc"], False, "within the renewal window"),
        (0, ["b.svc", "c.svc"], False, "its names changed"),
        (0, ["b.svc"], True, "another CA signed it"),
    ],
)
def test_a_certificate_is_issued_again_when_due(
    days_later: int, names: list[str], other_ca: bool, reason: str | None
) -> None:
    ca = new_ca("ca", 365 * DAY, NOW)
    pem = issue(ca, "b", ["b.svc"], 90 * DAY, NOW).cert_pem
    signer = new_ca("ca", 365 * DAY, NOW) if other_ca else ca
    found = renewal_reason(pem, signer.certificate, names, NOW + days_later * DAY, 30 * DAY)
    assert found == reason or (reason is not None and found is not None and reason in found)


def test_a_certificate_lasting_as_long_as_its_ca_is_kept_in_the_renewal_window() -> None:
    """Issued again, it could last no longer: the CA expires first (a CA the user brings
    and has not replaced yet)."""
    ca = new_ca("ca", 40 * DAY, NOW)
    pem = issue(ca, "b", ["b.svc"], 40 * DAY, NOW).cert_pem
    assert renewal_reason(pem, ca.certificate, ["b.svc"], NOW + 35 * DAY, 30 * DAY) is None


def test_a_missing_or_unreadable_certificate_is_issued() -> None:
    ca = new_ca("ca", 365 * DAY, NOW).certificate
    assert renewal_reason(None, ca, [], NOW, DAY) == "no certificate yet"
    assert renewal_reason(b"garbage", ca, [], NOW, DAY) == "the certificate cannot be read"


def test_a_ca_is_renewed_ahead_of_expiry_and_the_old_one_signs_for_half_the_window() -> None:
    renew = 30 * DAY
    old = new_ca("ca", 365 * DAY, NOW).certificate
    assert plan_ca(None, None, NOW, renew) == CaPlan("no CA yet", False, False, renew)
    assert plan_ca(old, None, NOW + 334 * DAY, renew) == CaPlan(None, False, False, renew)

    renewal = plan_ca(old, None, NOW + 336 * DAY, renew)
    assert renewal.renew is not None and "within the renewal window" in renewal.renew
    assert renewal.sign_with_previous and renewal.leaf_renew_before == 15 * DAY

    new = new_ca("ca", 365 * DAY, NOW + 336 * DAY).certificate
    # clients have half the window to trust the new CA; the old one signs meanwhile
    assert plan_ca(new, old, NOW + 349 * DAY, renew) == CaPlan(None, False, True, 15 * DAY)
    assert plan_ca(new, old, NOW + 351 * DAY, renew) == CaPlan(None, False, False, renew)
    # the old CA has expired: it is no longer trusted
    assert plan_ca(new, old, NOW + 366 * DAY, renew) == CaPlan(None, True, False, renew)


def test_a_ca_found_expired_or_nearly_is_replaced_and_signs_nothing_more() -> None:
    renew = 30 * DAY
    old = new_ca("ca", 365 * DAY, NOW).certificate
    for days_later in (351, 400):  # under half the window left, or already expired
        plan = plan_ca(old, None, NOW + days_later * DAY, renew)
        assert plan.renew is not None and not plan.sign_with_previous
        assert plan.leaf_renew_before == renew
