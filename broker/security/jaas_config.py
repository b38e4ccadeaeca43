"""Kafka's ``sasl.jaas.config`` value: one or more login modules, each
``<class> <flag> (<name>=<value>)* ;``, tokenized as Kafka's ``JaasConfig`` does so that a
value written for Kafka means the same here:

- whitespace and control characters separate tokens; ``;`` and ``=`` are tokens of their own;
- ``/* ... */``, ``// ...`` and a lone ``/`` (to the end of the line) are comments;
- a value is a bare word or a string in double or single quotes, where a backslash
  escapes the next character (``\\n``, ``\\t``, ``\\"``, ``\\\\``, octal ``\\ooo``, ...);
- the flag is ``required``, ``requisite``, ``sufficient`` or ``optional`` (any case);
- a repeated option keeps its last value.

Error messages name keys and flags written as bare words, never a quoted token, so a
misplaced password does not end up in a log.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

_SEPARATORS = frozenset(";=/\"'")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class JaasConfigError(ValueError):
    pass


class ControlFlag(enum.Enum):
    REQUIRED = "required"
    REQUISITE = "requisite"
    SUFFICIENT = "sufficient"
    OPTIONAL = "optional"


@dataclass(frozen=True)
class LoginModuleEntry:
    login_module: str
    control_flag: ControlFlag
    options: Mapping[str, str] = field(repr=False)

    def __repr__(self) -> str:
        return (
            f"LoginModuleEntry(login_module={self.login_module!r}, "
            f"control_flag={self.control_flag.name}, options={sorted(self.options)})"
        )


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "quoted", ";", "=", or "end" past the last token
    text: str = field(repr=False)

    def describe(self) -> str:
        return f"'{self.text}'" if self.kind == "word" else f"a {self.kind} token"


_TEXT = ("word", "quoted")
_END = _Token("end", "")


def parse_jaas_config(text: str) -> tuple[LoginModuleEntry, ...]:
    tokens = list(_tokenize(text))
    entries = []
    position = 0
    while position < len(tokens):
        entry, position = _entry(tokens, position)
        entries.append(entry)
    if not entries:
        raise JaasConfigError("Login module not specified in JAAS config")
    return tuple(entries)


def _entry(tokens: list[_Token], position: int) -> tuple[LoginModuleEntry, int]:
    module = tokens[position]
    if module.kind not in _TEXT:
        raise JaasConfigError("Login module not specified in JAAS config")
    position += 1
    if position == len(tokens):
        raise JaasConfigError("Login module control flag not specified in JAAS config")
    flag = tokens[position]
    try:
        control_flag = ControlFlag(flag.text.lower()) if flag.kind == "word" else None
    except ValueError:
        control_flag = None
    if control_flag is None:
        raise JaasConfigError(f"Invalid login module control flag {flag.describe()} in JAAS config")
    position += 1
    options: dict[str, str] = {}
    while position < len(tokens) and tokens[position].kind != ";":
        key, equals, value = [*tokens[position : position + 3], _END, _END][:3]
        if key.kind not in _TEXT or equals.kind != "=" or value.kind not in _TEXT:
            raise JaasConfigError(f"Value not specified for key {key.describe()} in JAAS config")
        options[key.text] = value.text
        position += 3
    if position == len(tokens):
        raise JaasConfigError("JAAS config entry not terminated by semi-colon")
    return LoginModuleEntry(module.text, control_flag, options), position + 1


def _tokenize(text: str) -> Iterator[_Token]:
    position = 0
    while position < len(text):
        char = text[position]
        if char <= " ":
            position += 1
        elif char == "/":
            position = _skip_comment(text, position)
        elif char in ";=":
            yield _Token(char, char)
            position += 1
        elif char in "\"'":
            quoted, position = _quoted(text, position)
            yield _Token("quoted", quoted)
        else:
            start = position
            while (
                position < len(text) and text[position] > " " and text[position] not in _SEPARATORS
            ):
                position += 1
            yield _Token("word", text[start:position])


def _skip_comment(text: str, position: int) -> int:
    if text.startswith("/*", position):
        end = text.find("*/", position + 2)
        if end < 0:
            raise JaasConfigError("unterminated /* comment in JAAS config")
        return end + 2
    end = text.find("\n", position)
    return len(text) if end < 0 else end + 1


def _quoted(text: str, position: int) -> tuple[str, int]:
    quote = text[position]
    position += 1
    chars = []
    while position < len(text) and text[position] not in (quote, "\n", "\r"):
        char = text[position]
        position += 1
        if char == "\\" and position < len(text):
            char, position = _escape(text, position)
        chars.append(char)
    if position == len(text) or text[position] != quote:
        raise JaasConfigError("unterminated quoted value in JAAS config")
    return "".join(chars), position + 1


def _escape(text: str, position: int) -> tuple[str, int]:
    """The character after a backslash: Java's StreamTokenizer escapes, octal included."""
    char = text[position]
    if char in _ESCAPES:
        return _ESCAPES[char], position + 1
    if "0" <= char <= "7":
        digits = 3 if char <= "3" else 2
        end = position
        while end < len(text) and end - position < digits and "0" <= text[end] <= "7":
            end += 1
        return chr(int(text[position:end], 8)), end
    return char, position + 1
