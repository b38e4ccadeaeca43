"""The admin requests behind a User: SCRAM credentials (KIP-554) and ACLs through
confluent-kafka, client quotas (KIP-546) through kafka-python."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exports
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from kafka import KafkaAdminClient  # type: ignore[import-untyped]
from kafka.errors import KafkaError as KafkaPythonError  # type: ignore[import-untyped]

from odradek import client_quota_requests as quota_requests

from ..planning import user_access
from .kafka_admin import KafkaAdminError

T = TypeVar("T")
SCRAM_ITERATIONS = 4096
"""As kafka-configs uses by default."""


class UserAccessAdmin:
    """Mixed into the admin client that owns ``_client``."""

    bootstrap_servers: str
    timeout: float
    _client: AdminClient

    def _kafka_python_settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def scram_mechanisms(self, user: str) -> frozenset[str]:
        """The SCRAM mechanisms ``user`` has a credential for."""
        futures = self._request(self._client.describe_user_scram_credentials, [user])
        assert isinstance(futures, dict)  # a dict when users are named
        try:
            description = futures[user].result(timeout=self.timeout)
        except KafkaException as error:
            if error.args[0].code() == KafkaError.RESOURCE_NOT_FOUND:
                return frozenset()
            raise KafkaAdminError(str(error)) from error
        return frozenset(
            info.mechanism.name.replace("_", "-") for info in description.scram_credential_infos
        )

    def set_scram_password(self, user: str, mechanism: str, password: str) -> None:
        info = ScramCredentialInfo(_scram(mechanism), SCRAM_ITERATIONS)
        upsertion = UserScramCredentialUpsertion(user, info, password.encode())
        self._wait_all(self._request(self._client.alter_user_scram_credentials, [upsertion]))

    def delete_scram(self, user: str, mechanisms: Iterable[str]) -> None:
        deletions = [UserScramCredentialDeletion(user, _scram(m)) for m in mechanisms]
        if deletions:
            self._wait_all(self._request(self._client.alter_user_scram_credentials, deletions))

    def acls(self, principal: str) -> frozenset[user_access.AclBinding]:
        """Every ACL binding of ``principal``."""
        any_name_or_host: Any = None
        found = self._request(
            self._client.describe_acls,
            AclBindingFilter(
                ResourceType.ANY,
                any_name_or_host,
                ResourcePatternType.ANY,
                principal,
                any_name_or_host,
                AclOperation.ANY,
                AclPermissionType.ANY,
            ),
        )
        return frozenset(_binding(b) for b in _result(found, self.timeout))

    def create_acls(self, bindings: Iterable[user_access.AclBinding]) -> None:
        acls = [_confluent(b) for b in bindings]
        if acls:
            self._wait_all(self._request(self._client.create_acls, acls))

    def delete_acls(self, bindings: Iterable[user_access.AclBinding]) -> None:
        filters = [_confluent(b, AclBindingFilter) for b in bindings]
        if filters:
            self._wait_all(self._request(self._client.delete_acls, filters))

    def user_quotas(self, user: str) -> dict[str, float]:
        """The quotas of ``user`` alone (not those of its client ids)."""
        filters = [[(quota_requests.USER, quota_requests.EXACT, user)]]
        with self._quota_admin() as admin:
            found = quota_requests.describe(admin, filters, self._timeout_ms, strict=True)
        return found.get(((quota_requests.USER, user),), {})

    def alter_user_quotas(self, user: str, changes: Mapping[str, float | None]) -> None:
        if changes:
            with self._quota_admin() as admin:
                target = ((quota_requests.USER, user),)
                quota_requests.alter(admin, target, changes, self._timeout_ms)

    @property
    def _timeout_ms(self) -> int:
        return int(self.timeout * 1000)

    def _request(self, fn: Callable[..., T], *args: Any) -> T:
        try:
            return fn(*args, request_timeout=self.timeout)
        except KafkaException as error:
            raise KafkaAdminError(str(error)) from error

    def _wait_all(self, futures: Mapping[Any, Future[Any]]) -> None:
        for future in futures.values():
            _result(future, self.timeout)

    @contextlib.contextmanager
    def _quota_admin(self) -> Iterator[Any]:
        """A kafka-python admin client for one exchange; its failures as KafkaAdminError."""
        try:
            admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap_servers.split(","),
                request_timeout_ms=self._timeout_ms,
                client_id="odradek-operator",
                **self._kafka_python_settings(),
            )
        except KafkaPythonError as error:
            raise KafkaAdminError(f"cannot reach {self.bootstrap_servers}: {error}") from error
        try:
            yield admin
        except (KafkaPythonError, quota_requests.QuotaRequestError) as error:
            raise KafkaAdminError(f"client quotas: {error}") from error
        finally:
            admin.close()


def _result(future: Future[T], timeout: float) -> T:
    try:
        return future.result(timeout=timeout)
    except (KafkaException, TimeoutError) as error:
        raise KafkaAdminError(str(error)) from error


def _scram(mechanism: str) -> ScramMechanism:
    return ScramMechanism[mechanism.replace("-", "_")]


# librdkafka's name of Kafka's CLUSTER resource type (4) is BROKER.
_RESOURCE_TYPES = {"CLUSTER": ResourceType.BROKER}
_RESOURCE_TYPE_NAMES = {value: key for key, value in _RESOURCE_TYPES.items()}


def _binding(acl: Any) -> user_access.AclBinding:
    """From confluent-kafka's binding (its fields typed loosely: enums as described)."""
    return user_access.AclBinding(
        resource_type=_RESOURCE_TYPE_NAMES.get(acl.restype, acl.restype.name),
        resource_name=acl.name,
        pattern_type=acl.resource_pattern_type.name,
        principal=acl.principal,
        host=acl.host,
        operation=acl.operation.name,
        permission=acl.permission_type.name,
    )


def _confluent(binding: user_access.AclBinding, kind: type[AclBinding] = AclBinding) -> Any:
    resource_type = binding.resource_type
    return kind(
        _RESOURCE_TYPES.get(resource_type) or ResourceType[resource_type],
        binding.resource_name,
        ResourcePatternType[binding.pattern_type],
        binding.principal,
        binding.host,
        AclOperation[binding.operation],
        AclPermissionType[binding.permission],
    )
