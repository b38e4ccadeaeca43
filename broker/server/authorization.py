"""Authorization of requests: the one place request handlers ask what a client may do.

Off unless ``authorizer.class.name`` names Kafka's built-in authorizer (either of Kafka's
class names), in which case every check goes to an ``Authorizer`` over an ``AclIndex``
that follows the ACLs of the metadata image: a binding created through any broker applies
here as soon as the image shows it. Off, everything is allowed, as in a Kafka broker
without an authorizer.

A denied check that a client asked for explicitly is logged at INFO the way Kafka's
authorizer logs it (principal, host, operation, resource, request; never a secret) and
counted in ``odradek_authorization_denials{resource_type}``; a check that only filters a
list (Metadata of all topics, ListGroups) or works out authorized operations is not.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from typing import TypeVar

from prometheus_client import Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_index import AclIndex
from odradek.broker.security.acl_model import (
    CLUSTER_NAME,
    AclOperation,
    ResourceType,
)
from odradek.broker.security.authorizer import ALLOW_EVERYONE_IF_NO_ACL_FOUND_CONFIG, Authorizer
from odradek.broker.security.client_address import acl_host
from odradek.broker.security.principal import (
    SUPER_USERS_CONFIG,
    KafkaPrincipal,
    parse_super_users,
)

log = logging.getLogger(__name__)

AUTHORIZER_CLASS_CONFIG = "authorizer.class.name"
BUILT_IN_AUTHORIZER_CLASSES = frozenset(
    {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
    }
)

# Kafka's AclEntry.authorizationError and AclEntry.supportedOperations.
DENIED = {
    ResourceType.TOPIC: ErrorCode.topic_authorization_failed,
    ResourceType.GROUP: ErrorCode.group_authorization_failed,
    ResourceType.CLUSTER: ErrorCode.cluster_authorization_failed,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.transactional_id_authorization_failed,
    ResourceType.DELEGATION_TOKEN: ErrorCode.delegation_token_authorization_failed,
}
_O = AclOperation
SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (_O.READ, _O.WRITE, _O.CREATE, _O.DESCRIBE, _O.DELETE, _O.ALTER,
                         _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (_O.CREATE, _O.CLUSTER_ACTION, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS,
                           _O.IDEMPOTENT_WRITE, _O.ALTER, _O.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE),
}  # fmt: skip
# Kafka's names of resource types in its authorizer log (SecurityUtils.resourceTypeName).
_TYPE_NAMES = {
    ResourceType.TOPIC: "Topic",
    ResourceType.GROUP: "Group",
    ResourceType.CLUSTER: "Cluster",
    ResourceType.TRANSACTIONAL_ID: "TransactionalId",
    ResourceType.DELEGATION_TOKEN: "DelegationToken",
    ResourceType.USER: "User",
}

T = TypeVar("T")
CONFIG_TOPIC, CONFIG_GROUP = 2, 32  # Kafka's ConfigResource.Type codes


def authorizer_from_config(config: BrokerConfig) -> Authorizer | None:
    """The authorizer ``authorizer.class.name`` asks for, or None when it is empty."""
    class_name = (config.get_str(AUTHORIZER_CLASS_CONFIG) or "").strip()
    if not class_name:
        return None
    if class_name not in BUILT_IN_AUTHORIZER_CLASSES:
        raise ConfigError(
            f"{AUTHORIZER_CLASS_CONFIG}: {class_name!r} is not an authorizer Odradek has; use"
            f" {' or '.join(sorted(BUILT_IN_AUTHORIZER_CLASSES))} (the built-in authorizer)"
        )
    return Authorizer(
        AclIndex(),
        super_users=parse_super_users(config.get_str(SUPER_USERS_CONFIG) or ""),
        allow_everyone_if_no_acl_found=config.get_bool(ALLOW_EVERYONE_IF_NO_ACL_FOUND_CONFIG),
    )


def config_resource(config_resource_type: int, name: str) -> tuple[ResourceType, str]:
    """The ACL resource guarding a config resource (DescribeConfigs, AlterConfigs): a topic
    or a group its own, a broker, its loggers and client metrics the cluster."""
    if config_resource_type == CONFIG_TOPIC:
        return ResourceType.TOPIC, name
    if config_resource_type == CONFIG_GROUP:
        return ResourceType.GROUP, name
    return ResourceType.CLUSTER, CLUSTER_NAME


def operations_bit_field(operations: Iterable[AclOperation]) -> int:
    """Kafka's authorized-operations field: bit ``code`` set for each operation."""
    return sum(1 << operation for operation in set(operations))


class RequestAuthorization:
    """What handlers ask: may the sender of this request do that?"""

    def __init__(self, authorizer: Authorizer | None, denials: Counter | None = None) -> None:
        self._authorizer = authorizer
        self._denials = denials

    @classmethod
    def off(cls) -> RequestAuthorization:
        return cls(None)

    @property
    def enabled(self) -> bool:
        return self._authorizer is not None

    def apply(self, old: MetadataImage | None, new: MetadataImage) -> None:
        """Keep the ACL index equal to the image's bindings (a store subscriber)."""
        if self._authorizer is None or (old is not None and old.acls is new.acls):
            return
        index = self._authorizer.acls
        for binding in [b for b in index if b not in new.acls]:
            index.remove(binding)
        for binding in new.acls:
            index.add(binding)

    def authorize(
        self,
        request: Request,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        *,
        log_denied: bool = True,
    ) -> bool:
        if self._authorizer is None:
            return True
        principal, host = _principal(request.principal), _host(request.client_host)
        if self._authorizer.authorize(principal, host, operation, resource_type, name):
            return True
        if log_denied:
            self._denied(request, principal, host, operation, resource_type, name)
        return False

    def authorize_cluster(
        self, request: Request, operation: AclOperation, *, log_denied: bool = True
    ) -> bool:
        return self.authorize(
            request, operation, ResourceType.CLUSTER, CLUSTER_NAME, log_denied=log_denied
        )

    def check(
        self, request: Request, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> None:
        """Raise ``KafkaError`` with the resource type's authorization error if denied."""
        if not self.authorize(request, operation, resource_type, name):
            raise KafkaError(DENIED[resource_type], "Authorization failed.")

    def check_cluster(self, request: Request, operation: AclOperation) -> None:
        self.check(request, operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def denied_code(
        self, request: Request, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> ErrorCode | None:
        """The authorization error to answer with, or None when allowed."""
        allowed = self.authorize(request, operation, resource_type, name)
        return None if allowed else DENIED[resource_type]

    def filter(
        self,
        request: Request,
        operation: AclOperation,
        resource_type: ResourceType,
        items: Iterable[T],
        name: Callable[[T], str | None] = str,
        *,
        log_denied: bool = True,
    ) -> list[T]:
        """The items whose resource (named by ``name``; None: not named, kept) is allowed;
        each distinct name is checked once, as Kafka's filterByAuthorized does."""
        if self._authorizer is None:
            return list(items)
        decided: dict[str, bool] = {}
        kept = []
        for item in items:
            resource = name(item)
            if resource is not None and resource not in decided:
                decided[resource] = self.authorize(
                    request, operation, resource_type, resource, log_denied=log_denied
                )
            if resource is None or decided[resource]:
                kept.append(item)
        return kept

    def allowed_names(
        self,
        request: Request,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str | None],
        *,
        log_denied: bool = True,
    ) -> set[str]:
        """The names (None: an unknown topic id, left out) whose resource is allowed."""
        known = [name for name in names if name is not None]
        return set(self.filter(request, operation, resource_type, known, log_denied=log_denied))

    def authorize_by_resource_type(
        self, request: Request, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """May the sender do ``operation`` on at least one resource of this type (KIP-679)?"""
        if self._authorizer is None:
            return True
        principal, host = _principal(request.principal), _host(request.client_host)
        return self._authorizer.authorize_by_resource_type(
            principal, host, operation, resource_type
        )

    def authorized_operations(
        self, request: Request, resource_type: ResourceType, name: str
    ) -> int:
        """The bit field of the operations the sender may do on a resource, as Kafka fills
        ``*_authorized_operations`` (every supported operation when authorization is off)."""
        supported = SUPPORTED_OPERATIONS[resource_type]
        return operations_bit_field(
            op
            for op in supported
            if self.authorize(request, op, resource_type, name, log_denied=False)
        )

    def _denied(
        self,
        request: Request,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> None:
        if self._denials is not None:
            self._denials.labels(resource_type.name.lower()).inc()
        log.info(
            "Principal = %s is Denied operation = %s from host = %s on resource = %s:LITERAL:%s"
            " for request = %s",
            principal,
            operation.name,
            host,
            _TYPE_NAMES.get(resource_type, resource_type.name),
            name,
            _request_name(request.header.api_key),
        )


@functools.lru_cache(maxsize=1024)
def _principal(text: str) -> KafkaPrincipal:
    return KafkaPrincipal.parse(text)


@functools.lru_cache(maxsize=1024)
def _host(client_host: str) -> str:
    """``Request.client_host`` ("/<address>") as ACL hosts name it."""
    address = client_host.removeprefix("/")
    try:
        return acl_host(address)
    except ValueError:  # no peer address (a socket that is not IP)
        return address


def _request_name(api_key: int) -> str:
    """Kafka's name of an API as its logs show it (``OffsetCommit``)."""
    try:
        words = ApiKey(api_key).name.split("_")
    except ValueError:
        return str(api_key)
    return "".join(word.capitalize() for word in words)
