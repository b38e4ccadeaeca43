"""Kafka's StandardAuthorizer decisions over an ``AclIndex``.

``authorize``: a super user may do anything; otherwise the bindings whose pattern covers
the resource (its literal name, the wildcard ``*``, any prefix of it) decide: one DENY that
applies to the principal (or ``User:*``), the host (or ``*``) and the operation (or ALL)
wins over any number of ALLOWs; an ALLOW of READ, WRITE, DELETE or ALTER also allows
DESCRIBE, and ALTER_CONFIGS also DESCRIBE_CONFIGS. When no binding covers the resource at
all, whoever it is for, ``allow.everyone.if.no.acl.found`` decides.

``authorize_by_resource_type`` is Kafka's default ``Authorizer.authorizeByResourceType``
(KIP-679, which StandardAuthorizer keeps): may the principal do the operation on at least
one resource of a type, e.g. WRITE some topic so that an idempotent producer may start.
"""

from __future__ import annotations

from collections.abc import Iterable

from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import (
    WILDCARD_HOST,
    WILDCARD_RESOURCE,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from odradek.broker.security.principal import KafkaPrincipal

ALLOW_EVERYONE_IF_NO_ACL_FOUND_CONFIG = "allow.everyone.if.no.acl.found"
# Kafka checks a resource of this name first, so that a super user (and the no-ACL default)
# is answered as for any single resource.
_PROBE_RESOURCE_NAME = "hardcode"


class Authorizer:
    def __init__(
        self,
        acls: AclIndex,
        *,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        """``super_users`` as ``parse_super_users`` reads ``super.users``; ``acls`` is
        shared: bindings added to or removed from it apply to the next check."""
        self.acls = acls
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: str,
    ) -> bool:
        """May ``principal``, connected from ``host`` (see ``acl_host``), do ``operation``
        on the resource of this type and literal name?"""
        if str(principal) in self.super_users:
            return True
        covered, acls = self.acls.lookup(resource_type, resource_name, principal)
        allowed = False
        for acl in acls:
            if acl.applies_to(host, operation):
                if acl.binding.entry.permission is not AclPermissionType.ALLOW:
                    return False
                allowed = True
        return allowed or (not covered and self.allow_everyone_if_no_acl_found)

    def authorize_by_resource_type(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
    ) -> bool:
        """May ``principal`` do ``operation`` on at least one resource of this type?

        Only bindings for exactly this operation or ALL count (no implied operations). A
        DENY of the wildcard ``*`` denies; otherwise an ALLOW of the wildcard allows, and so
        does an ALLOW of a literal name or prefix that no DENY of the same literal name or of
        a prefix of it overrides.
        """
        if resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            raise ValueError(f"a check by resource type needs one type, not {resource_type.name}")
        if operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise ValueError(f"a check by resource type needs one operation, not {operation.name}")
        if self.authorize(principal, host, operation, resource_type, _PROBE_RESOURCE_NAME):
            return True
        denied_literals: set[str] = set()
        denied_prefixes: set[str] = set()
        allowed: list[tuple[PatternType, str]] = []
        for acl in self.acls.of_type(resource_type, principal):
            entry, pattern = acl.binding.entry, acl.binding.pattern
            if entry.host not in (host, WILDCARD_HOST) or entry.operation not in (
                operation,
                AclOperation.ALL,
            ):
                continue
            if entry.permission is AclPermissionType.ALLOW:
                allowed.append((pattern.pattern_type, pattern.name))
            elif pattern.pattern_type is PatternType.PREFIXED:
                denied_prefixes.add(pattern.name)
            elif pattern.name == WILDCARD_RESOURCE:
                return False
            else:
                denied_literals.add(pattern.name)
        if (PatternType.LITERAL, WILDCARD_RESOURCE) in allowed:
            return True
        return any(
            not (pattern_type is PatternType.LITERAL and name in denied_literals)
            and not any(name[:end] in denied_prefixes for end in range(1, len(name) + 1))
            for pattern_type, name in allowed
        )
