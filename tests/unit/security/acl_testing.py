"""Short constructors for ACL bindings in tests."""

from __future__ import annotations

from odradek.broker.security.acl_model import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from odradek.broker.security.principal import KafkaPrincipal

ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
READ, WRITE, DESCRIBE, ALL = (
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.DESCRIBE,
    AclOperation.ALL,
)


def binding(
    name: str = "orders",
    *,
    resource_type: ResourceType = TOPIC,
    pattern_type: PatternType = LITERAL,
    principal: str = "User:alice",
    host: str = "*",
    operation: AclOperation = READ,
    permission: AclPermissionType = ALLOW,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(resource_type, name, pattern_type),
        AccessControlEntry(principal, host, operation, permission),
    )
