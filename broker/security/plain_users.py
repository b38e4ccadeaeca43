"""The users SASL/PLAIN checks passwords against, from either source a listener may use:

- Kafka's JAAS config: the ``user_<name>="<password>"`` options of
  ``org.apache.kafka.common.security.plain.PlainLoginModule`` (the first module entry
  that has the option wins, as in Kafka's ``PlainServerCallbackHandler``);
- a users file, one ``name=password`` a line: the name ends at the first ``=``,
  whitespace around the name and the password is not part of them, blank lines and lines
  starting with ``#`` or ``!`` are comments; a name given twice is an error.

Only a SHA-256 digest of each password is kept, and a check costs the same whether the
user exists or not and wherever the passwords differ.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from pathlib import Path

from odradek.broker.security.jaas_config import LoginModuleEntry

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
JAAS_USER_PREFIX = "user_"


class PlainUsersError(ValueError):
    """A users file that cannot be read; the text names the line, never its content."""


class PlainUsers:
    def __init__(self, passwords: Mapping[str, str]) -> None:
        self._digests = {name: _digest(password) for name, password in passwords.items()}

    def __repr__(self) -> str:
        return f"PlainUsers({len(self._digests)} users)"

    def __len__(self) -> int:
        return len(self._digests)

    def verify(self, username: str, password: str) -> bool:
        expected = self._digests.get(username)
        # An unknown user costs one comparison too, against a digest no password has.
        matches = hmac.compare_digest(_digest(password), expected or _NO_PASSWORD)
        return matches and expected is not None

    @classmethod
    def from_jaas(cls, entries: Iterable[LoginModuleEntry]) -> PlainUsers:
        passwords: dict[str, str] = {}
        for entry in entries:
            if entry.login_module != PLAIN_LOGIN_MODULE:
                continue
            for key, value in entry.options.items():
                if key.startswith(JAAS_USER_PREFIX):
                    passwords.setdefault(key.removeprefix(JAAS_USER_PREFIX), value)
        return cls(passwords)

    @classmethod
    def from_file(cls, path: Path) -> PlainUsers:
        return cls.parse(path.read_text(encoding="utf-8"))

    @classmethod
    def parse(cls, text: str) -> PlainUsers:
        passwords: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or stripped[0] in "#!":
                continue
            name, equals, password = stripped.partition("=")
            name, password = name.strip(), password.strip()
            if not equals or not name or not password:
                raise PlainUsersError(f"line {number}: expected name=password")
            if name in passwords:
                raise PlainUsersError(f"line {number}: user {name!r} is given twice")
            passwords[name] = password
        return cls(passwords)


def _digest(password: str) -> bytes:
    return hashlib.sha256(password.encode("utf-8", "surrogatepass")).digest()


_NO_PASSWORD = bytes(hashlib.sha256().digest_size)
