"""The Topic custom resource: one Kafka topic on a Cluster."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from .base import Schema
from .common import Conditions, DnsLabel, KafkaConfig

TopicName = Annotated[str, Field(pattern=r"^[a-zA-Z0-9._-]+$", min_length=1, max_length=249)]


class TopicSpec(Schema):
    """Desired state of a topic; the resource is the source of truth."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!has(self.replicas) || !has(self.config)"
                    " || !('min.insync.replicas' in self.config)"
                    " || int(self.config['min.insync.replicas']) <= self.replicas",
                    "message": "config min.insync.replicas cannot exceed replicas",
                },
                {
                    "rule": "!has(oldSelf.topicName) || has(self.topicName)"
                    " && self.topicName == oldSelf.topicName",
                    "message": "topicName cannot be changed",
                },
            ]
        }
    )

    cluster: DnsLabel
    """Name of the Cluster, in the same namespace, that holds the topic."""
    topic_name: TopicName | None = None
    """The Kafka topic name; defaults to metadata.name."""
    partitions: Annotated[int, Field(ge=1, le=100000)] = 1
    replicas: Annotated[int, Field(ge=1, le=32767)] | None = None
    """Replication factor; defaults to the cluster's default.replication.factor."""
    config: KafkaConfig = {}
    deletion_policy: Literal["Delete", "Retain"] = "Delete"
    """Delete: deleting the resource deletes the topic; Retain: the topic stays."""


class TopicStatus(Conditions):
    """Observed state of a topic."""

    topic_name: str | None = None
    topic_id: str | None = None
    partitions: int | None = None
    replicas: int | None = None
