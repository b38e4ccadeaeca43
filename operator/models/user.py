"""The User custom resource: a client's credentials, ACLs and quotas on a Cluster."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from .base import Schema
from .common import Conditions, DnsLabel

SecretName = Annotated[
    str, Field(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", min_length=1, max_length=253)
]


class SecretKeyRef(Schema):
    """A key of a Secret in the User's namespace."""

    name: SecretName
    key: Annotated[str, Field(pattern=r"^[-._a-zA-Z0-9]+$", min_length=1, max_length=253)]


class ValueFrom(Schema):
    secret_key_ref: SecretKeyRef


class Password(Schema):
    """Where the password comes from (default: the operator generates one)."""

    value_from: ValueFrom


class UserAuthentication(Schema):
    """The User's credential."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.type != 'tls' || !has(self.password)",
                    "message": "password applies only to scram-sha-512 and scram-sha-256",
                }
            ]
        }
    )

    type: Literal["scram-sha-512", "scram-sha-256", "tls"]
    """scram-sha-512 / scram-sha-256: a SCRAM password; tls: a client certificate issued by
    the Cluster's clients CA, whose common name is the User's name."""
    password: Password | None = None
    """With SCRAM: the password to use; omit to have one generated."""

    @property
    def sasl_mechanism(self) -> str | None:
        return None if self.type == "tls" else self.type.upper()


Operation = Literal[
    "All",
    "Read",
    "Write",
    "Create",
    "Delete",
    "Alter",
    "Describe",
    "ClusterAction",
    "DescribeConfigs",
    "AlterConfigs",
    "IdempotentWrite",
]


class AclResource(Schema):
    """What a rule is about: a topic, group or transactional id by name or name prefix, or
    the cluster."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.type == 'cluster' || has(self.name)",
                    "message": "name is required for topic, group and transactionalId",
                },
                {
                    "rule": "self.type != 'cluster' || !has(self.name)",
                    "message": "the cluster resource has no name",
                },
            ]
        }
    )

    type: Literal["topic", "group", "cluster", "transactionalId"]
    name: Annotated[str, Field(min_length=1, max_length=249)] | None = None
    """The name, or its prefix with patternType prefix; * is every name."""
    pattern_type: Literal["literal", "prefix"] = "literal"


class AclRule(Schema):
    """One ACL: operations the User may (allow) or may not (deny) do on a resource."""

    resource: AclResource
    operations: Annotated[list[Operation], Field(min_length=1, max_length=11)]
    host: Annotated[str, Field(min_length=1, max_length=253)] = "*"
    type: Literal["allow", "deny"] = "allow"


class UserAuthorization(Schema):
    type: Literal["simple"] = "simple"
    acls: Annotated[list[AclRule], Field(max_length=256)] = []


class UserQuotas(Schema):
    """Kafka's client quotas for this User (all its client ids)."""

    producer_byte_rate: Annotated[int, Field(ge=1)] | None = None
    consumer_byte_rate: Annotated[int, Field(ge=1)] | None = None
    request_percentage: Annotated[float, Field(ge=0.01)] | None = None
    controller_mutation_rate: Annotated[float, Field(ge=0.01)] | None = None

    def kafka(self) -> dict[str, float]:
        """The quotas set, by Kafka's names (producer_byte_rate, ...)."""
        return {key: float(value) for key, value in self.model_dump(exclude_none=True).items()}


class UserSpec(Schema):
    """A client of a Cluster: its credential, what it may do, and how fast."""

    cluster: DnsLabel
    """Name of the Cluster, in the same namespace."""
    authentication: UserAuthentication | None = None
    """Omit for a principal authenticated elsewhere (an oauth listener's token subject):
    the User then has ACLs and quotas, and no credential or Secret."""
    authorization: UserAuthorization | None = None
    """ACLs of User:<name>; omit for none (the Cluster's authorization then denies it all)."""
    quotas: UserQuotas | None = None


class UserStatus(Conditions):
    """Observed state of a User."""

    principal: str | None = None
    """What ACLs and the brokers' logs call the User: User:<name>."""
    secret: str | None = None
    """The Secret holding everything a client needs to connect as this User (none without
    authentication)."""
