"""Java's ``String.replaceAll`` replacement strings, for ``ssl.principal.mapping.rules``.

A rule written for Kafka says ``$1`` for a group and ``\\`` to escape, as
``java.util.regex.Matcher.appendReplacement`` reads them: ``$`` takes the longest run of
digits that still names an existing group (``$12`` with one group is group 1, then ``2``),
a group that did not take part adds nothing, and ``$`` at the end, ``$`` before a non-digit
or a group the pattern lacks are errors. Kafka first turns references to missing groups into
literal text (``SslPrincipalMapper.escapeLiteralBackReferences``, from Apache NiFi), so that
``$1@$4`` with three groups keeps ``$4`` as written.
"""

from __future__ import annotations

import re

_BACK_REFERENCE = re.compile(r"\$([0-9]+)")

Replacement = tuple[str | int, ...]
"""Literal text and group numbers, in order."""


def escape_literal_back_references(replacement: str, group_count: int) -> str:
    """Kafka's escaping of ``$n`` naming no group; a pattern without groups is left alone."""
    if group_count == 0:
        return replacement
    value = replacement
    # Positions are those of the original string, also after an insertion, as in Kafka.
    for match in _BACK_REFERENCE.finditer(replacement):
        digits = match.group(1)
        if digits.startswith("0"):
            continue
        index = int(digits)
        while index > group_count and index >= 10:
            index //= 10
        if index > group_count:
            dollar = match.start(1) - 1
            value = value[:dollar] + "\\" + value[dollar:]
    return value


def parse_replacement(replacement: str, group_count: int) -> Replacement:
    """Read a replacement as ``appendReplacement`` does; ``ValueError`` with Java's reason."""
    parts: list[str | int] = []
    literal: list[str] = []
    cursor = 0
    while cursor < len(replacement):
        char = replacement[cursor]
        cursor += 1
        if char == "\\":
            if cursor == len(replacement):
                raise ValueError("character to be escaped is missing")
            literal.append(replacement[cursor])
            cursor += 1
        elif char == "$":
            if cursor == len(replacement):
                raise ValueError("Illegal group reference: group index is missing")
            if replacement[cursor] == "{":
                raise ValueError("named group references (${name}) are not supported")
            if not "0" <= replacement[cursor] <= "9":
                raise ValueError("Illegal group reference")
            group = int(replacement[cursor])
            cursor += 1
            while cursor < len(replacement) and "0" <= replacement[cursor] <= "9":
                longer = group * 10 + int(replacement[cursor])
                if longer > group_count:
                    break
                group = longer
                cursor += 1
            if group > group_count:
                raise ValueError(f"No group {group}")
            if literal:
                parts.append("".join(literal))
                literal.clear()
            parts.append(group)
        else:
            literal.append(char)
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def expand(replacement: Replacement, match: re.Match[str]) -> str:
    return "".join(
        part if isinstance(part, str) else (match.group(part) or "") for part in replacement
    )
