"""Client settings that name a file instead of holding a secret, in the syntax of Kafka's
DirectoryConfigProvider: ``${directory:DIR:KEY}`` is the content of the file KEY in
directory DIR (a mounted Kubernetes Secret's key), without its trailing newlines. The
mirror and the Spark data source resolve them where their clients are made, so no
password stands in a config file or a Spark plan."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

_DIRECTORY_REFERENCE = re.compile(r"\$\{directory:([^:}]+):([^:}/]+)\}")


class UnreadableReference(ValueError):
    """A referenced file cannot be read; the message names it."""


def resolved(value: str) -> str:
    """``value`` with each ``${directory:DIR:KEY}`` replaced by that file's content."""

    def content(match: re.Match[str]) -> str:
        path = Path(match.group(1)) / match.group(2)
        try:
            return path.read_text().rstrip("\n")
        except OSError as error:
            raise UnreadableReference(f"cannot read {path}: {error.strerror}") from None

    return _DIRECTORY_REFERENCE.sub(content, value)


def resolved_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """Every setting resolved; an unreadable file is named with its setting."""
    result = {}
    for key, value in settings.items():
        try:
            result[key] = resolved(value)
        except UnreadableReference as error:
            raise UnreadableReference(f"{key}: {error}") from None
    return result
