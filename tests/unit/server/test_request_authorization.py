"""The request authorization helper: which authorizer the config asks for, the checks
handlers make, and the ACL index following the metadata image."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request, RequestHeader
from odradek.broker.security.acl_model import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from odradek.broker.server.authorization import (
    RequestAuthorization,
    authorizer_from_config,
    config_resource,
)

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def request(principal: str, host: str = "/127.0.0.1") -> Request:
    header = RequestHeader(ApiKey.FETCH, 11, 1, "test", 0)
    return Request(header, None, 0, host, "SASL_PLAINTEXT", principal)


def binding(name: str, operation: AclOperation, permission: AclPermissionType,
            pattern: PatternType = PatternType.LITERAL, principal: str = "User:alice",
            resource_type: ResourceType = ResourceType.TOPIC) -> AclBinding:  # fmt: skip
    return AclBinding(ResourcePattern(resource_type, name, pattern),
                      AccessControlEntry(principal, "*", operation, permission))  # fmt: skip


def authorization(
    *bindings: AclBinding, super_users: str = ""
) -> tuple[RequestAuthorization, Counter]:
    config = BrokerConfig.load(
        environ={}, overrides={"authorizer.class.name": STANDARD, "super.users": super_users}
    )
    denials = Counter("denials", "", ["resource_type"], registry=CollectorRegistry())
    result = RequestAuthorization(authorizer_from_config(config), denials)
    result.apply(None, MetadataImage("c", 0, acls=frozenset(bindings)))
    return result, denials


@pytest.mark.parametrize("class_name", [STANDARD, "kafka.security.authorizer.AclAuthorizer"])
def test_kafkas_authorizer_class_names_mean_the_built_in_authorizer(class_name: str) -> None:
    config = BrokerConfig.load(environ={}, overrides={"authorizer.class.name": class_name})
    assert authorizer_from_config(config) is not None


def test_no_authorizer_class_means_authorization_is_off() -> None:
    assert authorizer_from_config(BrokerConfig.load(environ={})) is None
    off = RequestAuthorization.off()
    assert off.authorize(request("User:bob"), AclOperation.DELETE, ResourceType.TOPIC, "t")
    assert off.authorized_operations(request("User:bob"), ResourceType.GROUP, "g") == (
        (1 << 3) | (1 << 8) | (1 << 6) | (1 << 10) | (1 << 11)
    )


def test_an_unknown_authorizer_class_is_refused_naming_the_key() -> None:
    config = BrokerConfig.load(environ={}, overrides={"authorizer.class.name": "com.acme.Authz"})
    with pytest.raises(ConfigError, match=r"^authorizer\.class\.name: 'com\.acme\.Authz'"):
        authorizer_from_config(config)


def test_check_raises_the_resource_types_authorization_error_and_counts_it() -> None:
    checks, denials = authorization(binding("t", AclOperation.READ, AclPermissionType.ALLOW))
    checks.check(request("User:alice"), AclOperation.READ, ResourceType.TOPIC, "t")
    for resource_type, code in [
        (ResourceType.TOPIC, ErrorCode.topic_authorization_failed),
        (ResourceType.GROUP, ErrorCode.group_authorization_failed),
        (ResourceType.CLUSTER, ErrorCode.cluster_authorization_failed),
        (ResourceType.TRANSACTIONAL_ID, ErrorCode.transactional_id_authorization_failed),
    ]:
        with pytest.raises(KafkaError) as raised:
            checks.check(request("User:bob"), AclOperation.READ, resource_type, "t")
        assert raised.value.code is code
    assert denials.labels("topic")._value.get() == 1


def test_filtering_checks_each_name_once_and_logs_nothing_when_asked_not_to() -> None:
    checks, denials = authorization(
        binding("p-", AclOperation.DESCRIBE, AclPermissionType.ALLOW, PatternType.PREFIXED)
    )
    names = ["p-1", "q", "p-1", None]
    allowed = checks.allowed_names(
        request("User:alice"), AclOperation.DESCRIBE, ResourceType.TOPIC, names, log_denied=False
    )
    assert allowed == {"p-1"}
    assert denials.labels("topic")._value.get() == 0


def test_super_users_and_the_index_follow_config_and_image() -> None:
    checks, _ = authorization(super_users="User:admin")
    assert checks.authorize(request("User:admin"), AclOperation.ALTER, ResourceType.CLUSTER, "x")
    grant = binding("t", AclOperation.WRITE, AclPermissionType.ALLOW)
    alice = request("User:alice")
    assert not checks.authorize(alice, AclOperation.WRITE, ResourceType.TOPIC, "t")
    checks.apply(MetadataImage("c", 0), MetadataImage("c", 0, acls=frozenset({grant})))
    assert checks.authorize(alice, AclOperation.WRITE, ResourceType.TOPIC, "t")
    checks.apply(MetadataImage("c", 0, acls=frozenset({grant})), MetadataImage("c", 0))
    assert not checks.authorize(alice, AclOperation.WRITE, ResourceType.TOPIC, "t")


def test_hosts_compare_as_java_prints_client_addresses() -> None:
    entry = AccessControlEntry("User:alice", "0:0:0:0:0:0:0:1", AclOperation.READ,
                               AclPermissionType.ALLOW)  # fmt: skip
    grant = AclBinding(ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL), entry)
    checks, _ = authorization(grant)
    assert checks.authorize(request("User:alice", "/::1"), AclOperation.READ,
                            ResourceType.TOPIC, "t")  # fmt: skip
    assert not checks.authorize(request("User:alice"), AclOperation.READ, ResourceType.TOPIC, "t")


def test_config_resources_map_to_the_acl_resource_guarding_them() -> None:
    assert config_resource(2, "orders") == (ResourceType.TOPIC, "orders")
    assert config_resource(32, "g") == (ResourceType.GROUP, "g")
    assert config_resource(4, "1") == (ResourceType.CLUSTER, "kafka-cluster")
    assert config_resource(8, "1") == (ResourceType.CLUSTER, "kafka-cluster")


def test_authorized_operations_include_implied_describe() -> None:
    checks, _ = authorization(binding("t", AclOperation.WRITE, AclPermissionType.ALLOW))
    bits = checks.authorized_operations(request("User:alice"), ResourceType.TOPIC, "t")
    assert bits == (1 << AclOperation.WRITE) | (1 << AclOperation.DESCRIBE)
