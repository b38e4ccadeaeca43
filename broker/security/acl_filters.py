"""Filters over ACL bindings, as DescribeAcls and DeleteAcls carry them.

Kafka's semantics: a ``None`` name, principal or host matches anything, and so do the
``ANY`` members; pattern type ``MATCH`` with a name selects every binding that would apply
to a resource of that name (the literal binding of that name, the wildcard ``*`` and every
prefix of it); ``ANY`` and a specific pattern type compare names exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.security.acl_model import (
    WILDCARD_RESOURCE,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)


@dataclass(frozen=True)
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    @property
    def is_unknown(self) -> bool:
        return (
            self.resource_type is ResourceType.UNKNOWN or self.pattern_type is PatternType.UNKNOWN
        )

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type not in (ResourceType.ANY, pattern.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        # MATCH: would ``pattern`` apply to a resource named ``self.name``?
        if pattern.pattern_type is PatternType.LITERAL:
            return pattern.name in (self.name, WILDCARD_RESOURCE)
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False


@dataclass(frozen=True)
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: AclPermissionType

    @property
    def is_unknown(self) -> bool:
        return (
            self.operation is AclOperation.UNKNOWN or self.permission is AclPermissionType.UNKNOWN
        )

    def matches(self, entry: AccessControlEntry) -> bool:
        # Exact strings: a filter for User:bob does not select the ACLs of User:*.
        return (
            self.principal in (None, entry.principal)
            and self.host in (None, entry.host)
            and self.operation in (AclOperation.ANY, entry.operation)
            and self.permission in (AclPermissionType.ANY, entry.permission)
        )


@dataclass(frozen=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern_filter.matches(binding.pattern) and self.entry_filter.matches(
            binding.entry
        )


ANY_RESOURCE = ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)
ANY_ENTRY = AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY)
ANY_BINDING = AclBindingFilter(ANY_RESOURCE, ANY_ENTRY)
