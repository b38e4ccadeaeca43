"""Kafka principals (``Type:name``) as ACLs, ``super.users`` and sessions name them.

Kafka splits a principal string at its first colon (``SecurityUtils.parseKafkaPrincipal``),
so ``User:CN=a,OU=b:c`` is type ``User`` and name ``CN=a,OU=b:c``.
"""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.config.definitions import ConfigError

USER_TYPE = "User"
SUPER_USERS_CONFIG = "super.users"


@dataclass(frozen=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """Split at the first colon; a string without one is no principal, as in Kafka."""
        principal_type, colon, name = text.partition(":")
        if not colon:
            raise ValueError(
                f"expected a string in format principalType:principalName but got {text}"
            )
        return cls(principal_type, name)

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
"""The principal of a connection that did not authenticate (PLAINTEXT, or TLS without a
client certificate)."""

WILDCARD_PRINCIPAL = KafkaPrincipal(USER_TYPE, "*")
"""An ACL for ``User:*`` applies to every principal, whatever its type."""


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users``: principals separated by semicolons, blanks ignored, as Kafka reads it.

    They are kept as strings because Kafka compares them with the session principal's
    string form.
    """
    users = set()
    for item in value.split(";"):
        user = item.strip()
        if not user:
            continue
        try:
            KafkaPrincipal.parse(user)
        except ValueError as exc:
            raise ConfigError(f"{SUPER_USERS_CONFIG}: {exc}") from None
        users.add(user)
    return frozenset(users)
