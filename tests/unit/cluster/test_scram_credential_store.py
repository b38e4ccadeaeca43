"""SCRAM credentials in the image and in the embedded single-broker store: altered in one
step, persisted in cluster-metadata.json with the salt and keys only, read back on the
next start."""

from __future__ import annotations

import asyncio
import base64
import stat
from pathlib import Path

from odradek.broker.cluster.metadata_image import BrokerRegistration, MetadataImage
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore
from odradek.broker.security.scram_credential import (
    ScramMechanism,
    derive_credential,
    salted_password,
)

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
BROKER = BrokerRegistration(0, "127.0.0.1", 9092)
ALICE_256 = derive_credential(SHA256, "alice-secret", iterations=8192)
ALICE_512 = derive_credential(SHA512, "alice-secret")
BOB_256 = derive_credential(SHA256, "bob-secret")


def test_the_image_lists_users_by_name_and_their_mechanisms_in_order() -> None:
    image = MetadataImage("c", 0).with_scram_credentials(
        {("bob", SHA256): BOB_256, ("alice", SHA512): ALICE_512, ("alice", SHA256): ALICE_256},
        (),
    )
    assert list(image.scram_users) == ["alice", "bob"]
    assert image.scram_users["alice"] == (ALICE_256, ALICE_512)
    assert image.scram_credential("alice", SHA512) is ALICE_512
    assert image.scram_credential("carol", SHA256) is None

    without = image.with_scram_credentials({}, [("alice", SHA256)])
    assert without.scram_users["alice"] == (ALICE_512,)
    assert image.scram_credential("alice", SHA256) is ALICE_256  # images are immutable


def test_the_image_repr_shows_no_key_material() -> None:
    image = MetadataImage("c", 0, scram_credentials={("alice", SHA256): ALICE_256})
    text = repr(image)
    assert "iterations=8192" in text
    for secret in (ALICE_256.salt, ALICE_256.stored_key, ALICE_256.server_key):
        assert repr(secret) not in text and base64.b64encode(secret).decode() not in text


def test_credentials_survive_a_restart_of_the_embedded_store(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    changes = {("alice", SHA256): ALICE_256, ("alice", SHA512): ALICE_512, ("bob", SHA256): BOB_256}
    assert asyncio.run(store.alter_scram_credentials(changes, ()))
    assert asyncio.run(store.alter_scram_credentials({}, [("bob", SHA256)]))

    reopened = EmbeddedMetadataStore(tmp_path, BROKER)
    assert reopened.image.scram_credentials == {
        ("alice", SHA256): ALICE_256,
        ("alice", SHA512): ALICE_512,
    }


def test_a_deletion_of_a_credential_already_gone_writes_nothing(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    heard: list[MetadataImage] = []
    store.subscribe(lambda old, new: heard.append(new))
    written = asyncio.run(
        store.alter_scram_credentials({("bob", SHA256): BOB_256}, [("alice", SHA256)])
    )
    assert not written and not heard and store.image.scram_credentials == {}


def test_the_metadata_file_holds_no_password_and_only_its_owner_reads_it(tmp_path: Path) -> None:
    store = EmbeddedMetadataStore(tmp_path, BROKER)
    asyncio.run(store.alter_scram_credentials({("alice", SHA256): ALICE_256}, ()))
    path = tmp_path / EmbeddedMetadataStore.FILE_NAME
    text = path.read_text()
    salted = salted_password(SHA256, "alice-secret", ALICE_256.salt, 8192)
    assert "alice-secret" not in text and base64.b64encode(salted).decode() not in text
    assert base64.b64encode(ALICE_256.stored_key).decode() in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_decoy_secret_for_unknown_users_is_made_once_and_kept(tmp_path: Path) -> None:
    first = EmbeddedMetadataStore(tmp_path, BROKER).image
    again = EmbeddedMetadataStore(tmp_path, BROKER).image
    other = EmbeddedMetadataStore(tmp_path / "other", BROKER).image
    assert len(first.scram_decoy_secret) == 32
    assert again.scram_decoy_secret == first.scram_decoy_secret  # same answers after a restart
    assert other.scram_decoy_secret != first.scram_decoy_secret
    assert first.scram_decoy_secret.hex() not in repr(first)
