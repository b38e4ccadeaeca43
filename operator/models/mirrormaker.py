"""The MirrorMaker custom resource: topics copied from one cluster to another."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from ..constants import DEFAULT_IMAGE
from .base import Schema
from .common import Conditions, DnsLabel, KafkaConfig, Resources

Alias = Annotated[str, Field(pattern=r"^[a-zA-Z0-9_-]+$", max_length=64)]
Pattern = Annotated[str, Field(min_length=1, max_length=1024)]
Patterns = Annotated[list[Pattern], Field(max_length=64)]


class Endpoint(Schema):
    """A cluster to mirror from or to: a Cluster in this namespace or bootstrap servers."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.cluster) != has(self.bootstrapServers)",
                    "message": "set exactly one of cluster and bootstrapServers",
                },
                {
                    "rule": "!has(self.listener) || has(self.cluster)",
                    "message": "listener names a listener of the Cluster: set cluster",
                },
                {
                    "rule": "!has(self.user) || has(self.cluster)",
                    "message": "user names a User of the Cluster: set cluster",
                },
            ]
        }
    )

    alias: Alias
    """Short name of the cluster, used as the prefix of mirrored topic names."""
    cluster: DnsLabel | None = None
    bootstrap_servers: Annotated[str, Field(min_length=1)] | None = None
    listener: Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]*$", max_length=32)] | None = None
    """The Cluster's listener to connect to (default: its first); with TLS the mirror trusts
    the Cluster's CA."""
    user: DnsLabel | None = None
    """A User of the Cluster, in this namespace, the mirror connects as: its Secret's password
    or client certificate, for the listener's authentication."""
    config: KafkaConfig = {}
    """Extra client settings (security, timeouts) in Kafka's names."""


class Selection(Schema):
    """Regular expressions selecting names: included unless excluded."""

    include: Patterns = [".*"]
    exclude: Patterns = []


class OffsetSync(Schema):
    """How often the mirror records source -> target offset pairs."""

    enabled: bool = True
    interval_seconds: Annotated[int, Field(ge=1)] = 60


class Checkpoints(Schema):
    """Consumer group offset translation for failover to the target."""

    enabled: bool = True
    interval_seconds: Annotated[int, Field(ge=1)] = 60
    sync_group_offsets: bool = False
    """Write translated offsets into the target's (inactive) consumer groups."""


class MirrorMakerSpec(Schema):
    """Desired state of a mirror between two clusters."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "self.source.alias != self.target.alias",
                    "message": "source and target need different aliases",
                }
            ]
        }
    )

    source: Endpoint
    target: Endpoint
    topics: Selection = Selection()
    groups: Selection = Selection(include=[])
    naming: Literal["prefix", "identity"] = "prefix"
    """prefix: <source alias>.<topic> (prevents loops); identity: the same name."""
    refresh_interval_seconds: Annotated[int, Field(ge=1)] = 60
    """How often source topics are rescanned: new topics, added partitions, changed configs."""
    replicas: Annotated[int, Field(ge=0, le=100)] = 1
    image: Annotated[str, Field(min_length=1)] = DEFAULT_IMAGE
    resources: Resources | None = None
    offset_sync: OffsetSync = OffsetSync()
    checkpoints: Checkpoints = Checkpoints()
    exactly_once: bool = False
    """Copy each record exactly once (a transactional producer per source partition, the
    source offsets committed in the same transactions on the target); else at least once."""


class MirrorMakerStatus(Conditions):
    """Observed state of a mirror."""

    replicas: int = 0
    ready_replicas: int = 0
    mirrored_topics: Annotated[list[str], Field(max_length=10000)] = []
