"""``ssl.principal.mapping.rules``: from a client certificate's subject to a user name.

Read as Kafka's ``SslPrincipalMapper`` reads it: a comma-separated list of ``DEFAULT`` (the
distinguished name unchanged) and ``RULE:pattern/replacement/`` with an optional ``L`` or
``U`` (lower or upper case the result); a ``/`` or ``\\`` inside a pattern or replacement is
escaped with ``\\``, and empty entries are skipped. The first rule whose pattern matches the
whole RFC 2253 name (as ``distinguished_name.rfc2253_name`` writes it) replaces every match
of the pattern in it, with Java's replacement syntax (``$1``).

Patterns are Python regular expressions, which read the patterns Kafka's documentation
shows the same as Java does; Java-only syntax (``(?<name>...)``, ``\\p{Lower}``, ``\\Q``,
``[a-z&&[^e]]``) is refused when the rules are read. So are replacements naming groups the
pattern lacks, which Kafka would only fail on when a certificate matches.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

from odradek.broker.config.definitions import ConfigError
from odradek.broker.security.distinguished_name import Subject, rfc2253_name
from odradek.broker.security.java_replacement import (
    Replacement,
    escape_literal_back_references,
    expand,
    parse_replacement,
)
from odradek.broker.security.principal import ANONYMOUS, USER_TYPE, KafkaPrincipal

SSL_PRINCIPAL_MAPPING_RULES_CONFIG = "ssl.principal.mapping.rules"
DEFAULT_SSL_PRINCIPAL_MAPPING_RULES = "DEFAULT"

# Kafka's RULE_PATTERN: (1) DEFAULT, (2) pattern, (4) replacement, (6) case, (7) anything
# else, so that the splitter below never stops at a malformed rule.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)", re.ASCII)
_RULE_PARSER = re.compile(_RULE, re.ASCII)


class NoMatchingRule(LookupError):
    """No rule maps this name: Kafka fails the TLS client's authentication."""


@dataclass(frozen=True)
class MappingRule:
    """One rule; ``pattern`` is ``None`` for ``DEFAULT``."""

    pattern: re.Pattern[str] | None
    replacement: str = ""
    case: str = ""
    """``L``, ``U`` or empty."""
    _parts: Replacement = ()

    def apply(self, distinguished_name: str) -> str | None:
        """The mapped name, or ``None`` when the pattern does not match the whole name."""
        if self.pattern is None:
            return distinguished_name
        if self.pattern.fullmatch(distinguished_name) is None:
            return None
        name = self.pattern.sub(lambda match: expand(self._parts, match), distinguished_name)
        if self.case == "L":
            return name.lower()
        return name.upper() if self.case == "U" else name

    def __str__(self) -> str:
        """Kafka's form, e.g. ``RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L``."""
        if self.pattern is None:
            return "DEFAULT"
        case = f"/{self.case}" if self.case else ""
        return f"RULE:{self.pattern.pattern}/{self.replacement}{case}"


@dataclass(frozen=True)
class PrincipalMapper:
    rules: tuple[MappingRule, ...]

    @classmethod
    def from_rules(cls, value: str = DEFAULT_SSL_PRINCIPAL_MAPPING_RULES) -> PrincipalMapper:
        """Read ``ssl.principal.mapping.rules``; ``ConfigError`` names it and the bad rule."""
        texts = [match.group(1) for match in _RULE_SPLITTER.finditer(value.strip())]
        return cls(tuple(rule for text in texts if (rule := _parse_rule(text)) is not None))

    def name(self, distinguished_name: str) -> str:
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name is not None:
                return name
        rules = ", ".join(str(rule) for rule in self.rules)
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules [{rules}]")

    def principal(self, subject: Subject | None) -> KafkaPrincipal:
        """The principal of a TLS connection, from ``getpeercert()["subject"]``: ``User:``
        and the mapped name, or ANONYMOUS when the client sent no certificate."""
        if not subject:
            return ANONYMOUS
        return KafkaPrincipal(USER_TYPE, self.name(rfc2253_name(subject)))


def _parse_rule(text: str) -> MappingRule | None:
    match = _RULE_PARSER.match(text)
    end = match.end() if match else 0
    if match is None or end != len(text):
        raise ConfigError(
            f"{SSL_PRINCIPAL_MAPPING_RULES_CONFIG}: invalid rule `{text}` (unmatched "
            f"`{text[end:]}`); a rule is DEFAULT or RULE:pattern/replacement/ with an "
            "optional L or U after the last slash"
        )
    if match.group(1) is not None:
        return MappingRule(None)
    if match.group(2) is None:
        return None  # an empty entry, as between two commas
    pattern_text, replacement, case = match.group(2), match.group(4), match.group(6)
    try:
        pattern = _compile(pattern_text)
        escaped = escape_literal_back_references(replacement, pattern.groups)
        parts = parse_replacement(escaped, pattern.groups)
    except (re.error, ValueError, FutureWarning) as exc:
        raise ConfigError(f"{SSL_PRINCIPAL_MAPPING_RULES_CONFIG}: rule `{text}`: {exc}") from None
    return MappingRule(pattern, replacement, case, parts)


def _compile(pattern: str) -> re.Pattern[str]:
    """Compile a Java pattern, refusing what Python would read differently."""
    with warnings.catch_warnings():
        # Python warns of, and reads literally, the nested sets and set operations (``[a-z&&[^e]]``)
        # of Java's character classes.
        warnings.simplefilter("error", FutureWarning)
        # ASCII: Java's \w, \d, \s and (?i) are ASCII-only unless a pattern asks otherwise.
        return re.compile(pattern, re.ASCII)
