"""Metadata: brokers, controller and topic layouts, auto-creating unknown topics.

As in Kafka, a topic the sender may not DESCRIBE is left out of an all-topics answer and
answered TOPIC_AUTHORIZATION_FAILED when named (whether it exists or not); auto-creation
needs CREATE on the cluster or on the topic."""

from __future__ import annotations

from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.group.group_partition import OFFSETS_TOPIC
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import CLUSTER_NAME, AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.types import AUTHORIZED_OPERATIONS_OMITTED
from odradek.broker.server.topic_admin import create_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    image = context.store.image
    authorization = context.authorization
    requested = body.topics
    if requested is None or (request.header.api_version == 0 and not requested):
        # Internal topics too, flagged is_internal, as Kafka answers (tools list them).
        visible = authorization.filter(
            request,
            AclOperation.DESCRIBE,
            ResourceType.TOPIC,
            image.topics.values(),
            lambda topic: topic.name,
            log_denied=False,
        )
        topics = [topic_entry(topic, image) for topic in visible]
    else:
        auto_create = getattr(body, "allow_auto_topic_creation", True) and (
            context.config.get_bool("auto.create.topics.enable")
        )
        topics = [await _lookup(context, request, item, auto_create) for item in requested]
    if getattr(body, "include_topic_authorized_operations", False):
        for entry in topics:
            if entry["name"] is not None and entry["error_code"] != _DENIED:
                entry["topic_authorized_operations"] = authorization.authorized_operations(
                    request, ResourceType.TOPIC, entry["name"]
                )
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,  # v13+ (KIP-1102): nothing asks for a re-bootstrap
        # each broker's address on the listener this request came through, as in Kafka
        "brokers": [
            {"node_id": broker.node_id, "host": ep.host, "port": ep.port, "rack": broker.rack}
            for broker in image.brokers.values()
            if (ep := broker.endpoint(request.listener_name)) is not None
        ],
        "cluster_id": image.cluster_id,
        "controller_id": image.controller_id,
        "topics": topics,
        "cluster_authorized_operations": _cluster_operations(context, request),
    }


_DENIED = ErrorCode.topic_authorization_failed


def _cluster_operations(context: BrokerContext, request: Request) -> int:
    """v8-v10 may ask for the operations allowed on the cluster: none without DESCRIBE."""
    if not getattr(request.body, "include_cluster_authorized_operations", False):
        return AUTHORIZED_OPERATIONS_OMITTED
    authorization = context.authorization
    if not authorization.authorize_cluster(request, AclOperation.DESCRIBE):
        return 0
    return authorization.authorized_operations(request, ResourceType.CLUSTER, CLUSTER_NAME)


async def _lookup(
    context: BrokerContext, request: Request, item: Any, auto_create: bool
) -> dict[str, Any]:
    image = context.store.image
    authorization = context.authorization
    name = item.name if item.name is not None else image.topic_name(getattr(item, "topic_id", None))
    if name is not None and not authorization.authorize(
        request, AclOperation.DESCRIBE, ResourceType.TOPIC, name
    ):
        # named by id: the id is no secret, the name is
        return {**error_entry(item.name, _DENIED), "topic_id": getattr(item, "topic_id", None)}
    topic = image.topics.get(name) if name is not None else None
    if topic is None and name is not None and auto_create:
        if not (
            authorization.authorize_cluster(request, AclOperation.CREATE, log_denied=False)
            or authorization.authorize(request, AclOperation.CREATE, ResourceType.TOPIC, name)
        ):
            return error_entry(name, _DENIED)
        try:
            # the offsets topic has its own layout and configs, whoever asks for it first
            topic = (
                await context.groups.ensure_offsets_topic()
                if name == OFFSETS_TOPIC
                else await create_topic(context, name)
            )
        except KafkaError as error:
            if error.code is not ErrorCode.topic_already_exists:
                return error_entry(name, error.code)
            topic = context.store.image.topics[name]
    if topic is None:
        unknown = ErrorCode.unknown_topic_or_partition if name else ErrorCode.unknown_topic_id
        return error_entry(name, unknown)
    return topic_entry(topic, context.store.image)


def error_entry(name: str | None, code: ErrorCode) -> dict[str, Any]:
    """A topic's entry that carries only an error (Metadata, DescribeTopicPartitions)."""
    return {"error_code": code, "name": name, "topic_id": None, "is_internal": False,
            "partitions": []}  # fmt: skip


def topic_entry(topic: TopicMetadata, image: MetadataImage) -> dict[str, Any]:
    """A topic's partitions as ``image`` has them; a replica is offline where Kafka says
    so: its broker unregistered or fenced, or the replica in a log dir its broker reported
    offline."""
    offline = image.offline_holders()
    fenced = image.fenced_brokers()

    def offline_replicas(state: PartitionState) -> tuple[int, ...]:
        lost = offline.get((topic.name, state.partition), frozenset())
        return tuple(
            r for r in state.replicas if r not in image.brokers or r in fenced or r in lost
        )

    return {
        "error_code": ErrorCode.none,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": [
            {
                "error_code": (
                    ErrorCode.leader_not_available if state.leader < 0 else ErrorCode.none
                ),
                "partition_index": state.partition,
                "leader_id": state.leader,
                "leader_epoch": state.leader_epoch,
                "replica_nodes": state.replicas,
                "isr_nodes": state.isr,
                "offline_replicas": offline_replicas(state),
            }
            for state in topic.partitions
        ],
        "topic_authorized_operations": AUTHORIZED_OPERATIONS_OMITTED,
    }
