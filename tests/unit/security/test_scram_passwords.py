from __future__ import annotations

from odradek.broker.security.scram_credential import (
    ScramCredential,
    ScramMechanism,
    derive_credential,
)
from odradek.broker.security.scram_passwords import ScramPasswords

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


class Store:
    """The cluster's SCRAM credentials, as a broker's lookup sees them."""

    def __init__(self) -> None:
        self.credentials: dict[tuple[str, ScramMechanism], ScramCredential] = {}
        self.lookups = 0

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        self.lookups += 1
        return self.credentials.get((user, mechanism))


def test_a_password_matches_the_credential_of_either_mechanism() -> None:
    store = Store()
    store.credentials[("alice", SHA256)] = derive_credential(SHA256, "alice-256")
    store.credentials[("alice", SHA512)] = derive_credential(SHA512, "alice-512")
    passwords = ScramPasswords(store.lookup)
    assert passwords.verify("alice", "alice-256")
    assert passwords.verify("alice", "alice-512")
    assert not passwords.verify("alice", "alice-guess")
    assert not passwords.verify("bob", "alice-256")


def test_a_changed_or_deleted_credential_no_longer_takes_the_remembered_password() -> None:
    store = Store()
    store.credentials[("carol", SHA512)] = derive_credential(SHA512, "old")
    passwords = ScramPasswords(store.lookup)
    assert passwords.verify("carol", "old") and passwords.verify("carol", "old")
    store.credentials[("carol", SHA512)] = derive_credential(SHA512, "new")
    assert not passwords.verify("carol", "old")
    assert passwords.verify("carol", "new")
    del store.credentials[("carol", SHA512)]
    assert not passwords.verify("carol", "new")


def test_its_repr_shows_nothing_remembered() -> None:
    store = Store()
    store.credentials[("dave", SHA256)] = derive_credential(SHA256, "dave-secret")
    passwords = ScramPasswords(store.lookup)
    passwords.verify("dave", "dave-secret")
    assert "dave" not in repr(passwords)
