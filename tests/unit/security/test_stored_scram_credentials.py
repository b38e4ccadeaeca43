"""A credential stored the way AlterUserScramCredentials stores it authenticates the
password the client salted, through the image's lookup: what a client's admin API sets is
what its SASL/SCRAM login then proves, and only that."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kafka.admin import ScramMechanism as ClientMechanism
from kafka.admin import UserScramCredentialUpsertion as ClientUpsertion
from kafka.net.sasl.scram import SaslMechanismScram
from kio.schema.alter_user_scram_credentials.v0.request import ScramCredentialUpsertion
from sasl_client_drivers import run_kafka_python

from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore
from odradek.broker.security.sasl_mechanism import AuthenticationFailed
from odradek.broker.security.sasl_scram import ScramCredentialLookup, ScramServerExchange
from odradek.broker.security.scram_credential import ScramMechanism
from odradek.broker.server.scram_alteration import judged_change


def stored_lookup(data_dir: Path, mechanism: ScramMechanism) -> ScramCredentialLookup:
    """Set alice's password as kafka-python's admin client sends it (the salted password,
    8192 iterations), store it, and read it back from a fresh store on the same file."""
    sent = ClientUpsertion("alice", ClientMechanism(mechanism.wire_type), "alice-secret", 8192)
    request = ScramCredentialUpsertion(
        name=sent.user,
        mechanism=int(sent.mechanism),
        iterations=sent.iterations,
        salt=sent.salt,
        salted_password=sent.salted_password,
    )
    store = EmbeddedMetadataStore(data_dir, BrokerRegistration(0, "127.0.0.1", 9092))
    key, credential = judged_change(store.image, [request])
    assert credential is not None
    asyncio.run(store.alter_scram_credentials({key: credential}, ()))
    return EmbeddedMetadataStore(
        data_dir, BrokerRegistration(0, "127.0.0.1", 9092)
    ).image.scram_credential


def login(mechanism: ScramMechanism, lookup: ScramCredentialLookup, password: str) -> str:
    exchange = ScramServerExchange(mechanism, lookup, unknown_user_secret=b"cluster secret")
    client = SaslMechanismScram(
        sasl_plain_username="alice", sasl_plain_password=password, sasl_mechanism=mechanism.value
    )
    run_kafka_python(client, exchange)  # the client checks the server's signature too
    return exchange.principal


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_the_password_set_through_the_admin_api_authenticates(
    tmp_path: Path, mechanism: ScramMechanism
) -> None:
    assert login(mechanism, stored_lookup(tmp_path, mechanism), "alice-secret") == "User:alice"


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_another_password_does_not(tmp_path: Path, mechanism: ScramMechanism) -> None:
    with pytest.raises(AuthenticationFailed, match="invalid credentials"):
        login(mechanism, stored_lookup(tmp_path, mechanism), "alice-guess")


def test_a_credential_for_one_mechanism_does_not_log_in_with_the_other(tmp_path: Path) -> None:
    lookup = stored_lookup(tmp_path, ScramMechanism.SCRAM_SHA_256)
    with pytest.raises(AuthenticationFailed, match="invalid credentials"):
        login(ScramMechanism.SCRAM_SHA_512, lookup, "alice-secret")
