"""Kafka's ACL model: resource patterns, access control entries and their bindings.

The enums carry the codes the wire protocol uses (CreateAcls, DescribeAcls, DeleteAcls and
the authorized-operations bit fields); a code Kafka does not know decodes to ``UNKNOWN``, as
Kafka's ``fromCode`` does. Bindings are stored in the coordination store as JSON objects
that name the enum members, so a stored ACL reads the same to a person and to the broker.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self, TypeVar

WILDCARD_RESOURCE = "*"
WILDCARD_HOST = "*"
CLUSTER_NAME = "kafka-cluster"


class _KafkaCode(enum.IntEnum):
    @classmethod
    def from_code(cls, code: int) -> Self:
        """The member with this wire code, or ``UNKNOWN`` for a code this version lacks."""
        try:
            return cls(code)
        except ValueError:
            return cls["UNKNOWN"]


_Code = TypeVar("_Code", bound=_KafkaCode)


class ResourceType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType


@dataclass(frozen=True)
class AccessControlEntry:
    principal: str
    """As the client sent it (``User:alice``), so DescribeAcls gives back the same string."""
    host: str
    operation: AclOperation
    permission: AclPermissionType


@dataclass(frozen=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def to_json(self) -> dict[str, Any]:
        return {
            "resource_type": self.pattern.resource_type.name,
            "resource_name": self.pattern.name,
            "pattern_type": self.pattern.pattern_type.name,
            "principal": self.entry.principal,
            "host": self.entry.host,
            "operation": self.entry.operation.name,
            "permission_type": self.entry.permission.name,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AclBinding:
        """Read a stored binding; anything else than what ``to_json`` writes is refused."""
        return cls(
            ResourcePattern(
                _member(ResourceType, data, "resource_type"),
                _text(data, "resource_name"),
                _member(PatternType, data, "pattern_type"),
            ),
            AccessControlEntry(
                _text(data, "principal"),
                _text(data, "host"),
                _member(AclOperation, data, "operation"),
                _member(AclPermissionType, data, "permission_type"),
            ),
        )


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValueError(f"a stored ACL needs a string {key}, not {value!r}")
    return value


def _member(enum_type: type[_Code], data: Mapping[str, Any], key: str) -> _Code:
    name = _text(data, key)
    try:
        return enum_type[name]
    except KeyError:
        raise ValueError(f"a stored ACL has an unknown {key} {name!r}") from None
