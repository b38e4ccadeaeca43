"""Principals are split at their first colon, and ``super.users`` is read as Kafka reads it."""

from __future__ import annotations

import pytest

from odradek.broker.config.definitions import ConfigError
from odradek.broker.security.principal import (
    ANONYMOUS,
    KafkaPrincipal,
    parse_super_users,
)


@pytest.mark.parametrize(
    ("text", "principal"),
    [
        ("User:alice", KafkaPrincipal("User", "alice")),
        ("User:CN=alice,OU=eng:x", KafkaPrincipal("User", "CN=alice,OU=eng:x")),
        ("Group:", KafkaPrincipal("Group", "")),
        (":alice", KafkaPrincipal("", "alice")),
    ],
)
def test_a_principal_is_split_at_its_first_colon_and_written_back_the_same(
    text: str, principal: KafkaPrincipal
) -> None:
    assert KafkaPrincipal.parse(text) == principal
    assert str(principal) == text


@pytest.mark.parametrize("text", ["alice", ""])
def test_a_string_without_a_colon_is_no_principal(text: str) -> None:
    with pytest.raises(ValueError, match="principalType:principalName"):
        KafkaPrincipal.parse(text)


def test_the_anonymous_principal_is_kafkas() -> None:
    assert str(ANONYMOUS) == "User:ANONYMOUS"


@pytest.mark.parametrize(
    ("value", "users"),
    [
        ("", set()),
        (" ", set()),
        ("User:bob;User:alice ", {"User:bob", "User:alice"}),
        (";  User:bob  ;  User:alice ", {"User:bob", "User:alice"}),
        ("User:CN=admin,O=acme", {"User:CN=admin,O=acme"}),
    ],
)
def test_super_users_are_separated_by_semicolons(value: str, users: set[str]) -> None:
    # StandardAuthorizerTest.testGetConfiguredSuperUsers
    assert parse_super_users(value) == users


def test_a_super_user_that_is_no_principal_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^super\.users: .* but got bob$"):
        parse_super_users("bob;:alice")
