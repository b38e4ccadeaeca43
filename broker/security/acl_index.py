"""The ACL bindings of a cluster, indexed so that an authorization check stays cheap.

Every request is authorized, against thousands of bindings on a busy cluster. A check
looks only at the bindings that can apply to one resource and one principal: per resource
type, the literal bindings of its name and of the wildcard ``*`` (dictionary look-ups) and
the prefixed bindings whose prefix starts the name (found by looking up the name's prefixes
of the few lengths that prefixed bindings have), and of those only the ones for the
principal or ``User:*``. Operation and host are then compared on that short list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from odradek.broker.security.acl_filters import AclBindingFilter
from odradek.broker.security.acl_model import (
    WILDCARD_HOST,
    WILDCARD_RESOURCE,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from odradek.broker.security.principal import WILDCARD_PRINCIPAL, KafkaPrincipal

_EVERY_OPERATION = frozenset(AclOperation)
# Only ALLOW bindings imply other operations; DENY READ does not deny DESCRIBE (Kafka's
# StandardAuthorizerData.findResult).
_IMPLIED_BY_ALLOW = {
    AclOperation.READ: AclOperation.DESCRIBE,
    AclOperation.WRITE: AclOperation.DESCRIBE,
    AclOperation.DELETE: AclOperation.DESCRIBE,
    AclOperation.ALTER: AclOperation.DESCRIBE,
    AclOperation.ALTER_CONFIGS: AclOperation.DESCRIBE_CONFIGS,
}


@dataclass(frozen=True, slots=True)
class IndexedAcl:
    """A binding with what a check compares worked out once, when it is indexed."""

    binding: AclBinding
    principal: KafkaPrincipal
    operations: frozenset[AclOperation]
    """The operations this binding allows or denies, implied ones included."""

    @classmethod
    def of(cls, binding: AclBinding) -> IndexedAcl:
        entry = binding.entry
        if entry.operation is AclOperation.ALL:
            operations = _EVERY_OPERATION
        elif entry.permission is AclPermissionType.ALLOW and entry.operation in _IMPLIED_BY_ALLOW:
            operations = frozenset({entry.operation, _IMPLIED_BY_ALLOW[entry.operation]})
        else:
            operations = frozenset({entry.operation})
        return cls(binding, KafkaPrincipal.parse(entry.principal), operations)

    def applies_to(self, host: str, operation: AclOperation) -> bool:
        """For a binding of the principal (or ``User:*``), found by ``AclIndex.lookup``."""
        return operation in self.operations and self.binding.entry.host in (WILDCARD_HOST, host)


_ByPrincipal = dict[KafkaPrincipal, list[IndexedAcl]]
"""Bindings by principal: those of one pattern, or all of a resource type."""


@dataclass
class _TypeSection:
    """The bindings of one resource type."""

    literal: dict[str, _ByPrincipal] = field(default_factory=dict)
    prefixed: dict[str, _ByPrincipal] = field(default_factory=dict)
    prefix_lengths: list[int] = field(default_factory=list)
    """The distinct lengths of the prefixes in ``prefixed``, ascending."""
    _prefix_counts: Counter[int] = field(default_factory=Counter)
    by_principal: _ByPrincipal = field(default_factory=dict)
    """Every binding of the type, by principal."""

    def add(self, acl: IndexedAcl) -> None:
        pattern = acl.binding.pattern
        self.by_principal.setdefault(acl.principal, []).append(acl)
        bucket = self._by_name(pattern.pattern_type).setdefault(pattern.name, {})
        bucket.setdefault(acl.principal, []).append(acl)
        if pattern.pattern_type is PatternType.PREFIXED:
            self._count_prefix(len(pattern.name), +1)

    def remove(self, acl: IndexedAcl) -> None:
        pattern = acl.binding.pattern
        _discard(self.by_principal, acl.principal, acl)
        by_name = self._by_name(pattern.pattern_type)
        _discard(by_name[pattern.name], acl.principal, acl)
        if not by_name[pattern.name]:
            del by_name[pattern.name]
        if pattern.pattern_type is PatternType.PREFIXED:
            self._count_prefix(len(pattern.name), -1)

    def _by_name(self, pattern_type: PatternType) -> dict[str, _ByPrincipal]:
        return self.prefixed if pattern_type is PatternType.PREFIXED else self.literal

    def _count_prefix(self, length: int, change: int) -> None:
        self._prefix_counts[length] += change
        if not self._prefix_counts[length]:
            del self._prefix_counts[length]
        self.prefix_lengths = sorted(self._prefix_counts)

    def covering(self, name: str) -> list[_ByPrincipal]:
        """For each pattern that covers a resource of this name, its bindings by principal."""
        buckets = []
        if bucket := self.literal.get(name):
            buckets.append(bucket)
        if name != WILDCARD_RESOURCE and (bucket := self.literal.get(WILDCARD_RESOURCE)):
            buckets.append(bucket)
        for length in self.prefix_lengths:
            if length > len(name):
                break
            if bucket := self.prefixed.get(name[:length]):
                buckets.append(bucket)
        return buckets


class AclIndex:
    """A set of ACL bindings (adding one twice keeps one, as in Kafka), indexed for checks."""

    def __init__(self, bindings: Iterable[AclBinding] = ()) -> None:
        self._sections: dict[ResourceType, _TypeSection] = {}
        self._bindings: dict[AclBinding, IndexedAcl] = {}
        for binding in bindings:
            self.add(binding)

    def add(self, binding: AclBinding) -> bool:
        """Index a binding (validated: its principal has a colon); false if already held."""
        if binding in self._bindings:
            return False
        acl = IndexedAcl.of(binding)
        self._sections.setdefault(binding.pattern.resource_type, _TypeSection()).add(acl)
        self._bindings[binding] = acl
        return True

    def remove(self, binding: AclBinding) -> bool:
        """Drop a binding; false if it was not held."""
        acl = self._bindings.pop(binding, None)
        if acl is None:
            return False
        self._sections[binding.pattern.resource_type].remove(acl)
        return True

    def __len__(self) -> int:
        return len(self._bindings)

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(self._bindings)

    def __contains__(self, binding: object) -> bool:
        return binding in self._bindings

    def matching(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """The bindings a DescribeAcls or DeleteAcls filter selects, in the order they came."""
        return [binding for binding in self._bindings if acl_filter.matches(binding)]

    def lookup(
        self, resource_type: ResourceType, name: str, principal: KafkaPrincipal
    ) -> tuple[bool, list[IndexedAcl]]:
        """Whether any binding covers this resource, whoever it is for, and the covering
        bindings for ``principal`` or ``User:*``: all a check needs to look at."""
        section = self._sections.get(resource_type)
        buckets = section.covering(name) if section else []
        whom = _whom(principal)
        acls = [acl for bucket in buckets for who in whom for acl in bucket.get(who, ())]
        return bool(buckets), acls

    def of_type(self, resource_type: ResourceType, principal: KafkaPrincipal) -> list[IndexedAcl]:
        """The bindings of a resource type for ``principal`` or ``User:*``."""
        section = self._sections.get(resource_type)
        if section is None:
            return []
        return [acl for who in _whom(principal) for acl in section.by_principal.get(who, ())]


def _discard(bucket: _ByPrincipal, principal: KafkaPrincipal, acl: IndexedAcl) -> None:
    bucket[principal].remove(acl)
    if not bucket[principal]:
        del bucket[principal]


def _whom(principal: KafkaPrincipal) -> tuple[KafkaPrincipal, ...]:
    """The principals whose bindings apply to ``principal``."""
    return (principal,) if principal == WILDCARD_PRINCIPAL else (principal, WILDCARD_PRINCIPAL)
