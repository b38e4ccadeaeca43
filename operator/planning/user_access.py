"""What a User may do on its Cluster, as Kafka names it, and what must change to get there:
the listener its clients use, the ACL bindings to create and delete, the quotas to set and
remove."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..models.cluster import ClusterSpec, Listener
from ..models.user import UserSpec

CLUSTER_RESOURCE_NAME = "kafka-cluster"
"""Kafka's name of the one cluster resource."""
_PATTERN_TYPES = {"literal": "LITERAL", "prefix": "PREFIXED"}


@dataclass(frozen=True, order=True)
class AclBinding:
    """One ACL in Kafka's names: TOPIC, LITERAL, READ, ALLOW, ..."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str


@dataclass(frozen=True)
class AclChanges:
    create: tuple[AclBinding, ...]
    delete: tuple[AclBinding, ...]


def user_listener(cluster: ClusterSpec, authentication: str) -> Listener | None:
    """The first listener taking the User's kind of credential; for a SCRAM password, a
    plain listener when none takes its SCRAM mechanism."""
    accepted = (
        [authentication, "plain"] if authentication.startswith("scram-") else [authentication]
    )
    return next(
        (
            listener
            for kind in accepted
            for listener in cluster.listeners
            if listener.authentication is not None and listener.authentication.type == kind
        ),
        None,
    )


def principal(user: str) -> str:
    return f"User:{user}"


def desired_acls(user: str, spec: UserSpec) -> frozenset[AclBinding]:
    """Every binding the User's rules stand for (one per operation)."""
    if spec.authorization is None:
        return frozenset()
    return frozenset(
        AclBinding(
            resource_type=_upper_snake(rule.resource.type),
            resource_name=rule.resource.name or CLUSTER_RESOURCE_NAME,
            pattern_type=_PATTERN_TYPES[rule.resource.pattern_type],
            principal=principal(user),
            host=rule.host,
            operation=_upper_snake(operation),
            permission=rule.type.upper(),
        )
        for rule in spec.authorization.acls
        for operation in rule.operations
    )


def acl_changes(desired: Iterable[AclBinding], observed: Iterable[AclBinding]) -> AclChanges:
    """Create what is missing, delete what no rule asks for; the rest stays untouched."""
    wanted, found = set(desired), set(observed)
    return AclChanges(tuple(sorted(wanted - found)), tuple(sorted(found - wanted)))


def quota_changes(
    desired: Mapping[str, float], observed: Mapping[str, float]
) -> dict[str, float | None]:
    """Quota keys to set (to a value) or remove (None)."""
    changes: dict[str, float | None] = {
        key: value for key, value in desired.items() if observed.get(key) != value
    }
    changes |= {key: None for key in observed if key not in desired}
    return changes


def _upper_snake(name: str) -> str:
    """transactionalId -> TRANSACTIONAL_ID, DescribeConfigs -> DESCRIBE_CONFIGS."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper()
