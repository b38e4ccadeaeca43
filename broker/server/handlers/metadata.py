"""Metadata: brokers, controller and topic layouts, auto-creating unknown topics.

As in Kafka, a topic the sender may not DESCRIBE is left out of an all-topics answer and
answered TOPIC_AUTHORIZATION_FAILED when named (whether it exists or not); auto-creation
needs CREATE on the cluster or on the topic."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.group.group_partition import OFFSETS_TOPIC
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.protocol.metadata_response import (
    AUTHORIZED_OPERATIONS_OMITTED,
    MetadataBroker,
    MetadataTopic,
    encode_metadata_response,
    encode_partitions,
)
from odradek.broker.security.acl_model import CLUSTER_NAME, AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.types import EncodedResponse
from odradek.broker.server.topic_admin import create_topic


async def handle(context: BrokerContext, request: Request) -> EncodedResponse:
    body = request.body
    version = request.header.api_version
    image = context.store.image
    authorization = context.authorization
    requested = body.topics
    if requested is None or (version == 0 and not requested):
        # Internal topics too, flagged is_internal, as Kafka answers (tools list them).
        visible = authorization.filter(
            request,
            AclOperation.DESCRIBE,
            ResourceType.TOPIC,
            image.topics.values(),
            lambda topic: topic.name,
            log_denied=False,
        )
        topics = [_topic(context, topic, image, version) for topic in visible]
    else:
        auto_create = getattr(body, "allow_auto_topic_creation", True) and (
            context.config.get_bool("auto.create.topics.enable")
        )
        topics = [await _lookup(context, request, item, auto_create) for item in requested]
    if getattr(body, "include_topic_authorized_operations", False):
        topics = [
            replace(
                topic,
                authorized_operations=authorization.authorized_operations(
                    request, ResourceType.TOPIC, topic.name
                ),
            )
            if topic.name is not None and topic.error_code != _DENIED
            else topic
            for topic in topics
        ]
    # each broker's address on the listener this request came through, as in Kafka
    brokers = [
        MetadataBroker(broker.node_id, endpoint.host, endpoint.port, broker.rack)
        for broker in image.brokers.values()
        if (endpoint := broker.endpoint(request.listener_name)) is not None
    ]
    encoded = encode_metadata_response(
        version,
        brokers,
        image.cluster_id,
        image.controller_id,
        topics,
        _cluster_operations(context, request),
    )
    return EncodedResponse([encoded], throttle_first=version >= THROTTLE_FROM)


_DENIED = ErrorCode.topic_authorization_failed
THROTTLE_FROM = 3  # the first version whose response starts with throttle_time_ms


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
) -> MetadataTopic:
    image = context.store.image
    version = request.header.api_version
    authorization = context.authorization
    topic_id = getattr(item, "topic_id", None)
    name = item.name if item.name is not None else image.topic_name(topic_id)
    if name is not None and not authorization.authorize(
        request, AclOperation.DESCRIBE, ResourceType.TOPIC, name
    ):
        # named by id: the id is no secret, the name is
        return _error(version, item.name, _DENIED, topic_id)
    topic = image.topics.get(name) if name is not None else None
    if topic is None and name is not None and auto_create:
        if not (
            authorization.authorize_cluster(request, AclOperation.CREATE, log_denied=False)
            or authorization.authorize(request, AclOperation.CREATE, ResourceType.TOPIC, name)
        ):
            return _error(version, name, _DENIED)
        try:
            # the offsets topic has its own layout and configs, whoever asks for it first
            topic = (
                await context.groups.ensure_offsets_topic()
                if name == OFFSETS_TOPIC
                else await create_topic(context, name)
            )
        except KafkaError as error:
            if error.code is not ErrorCode.topic_already_exists:
                return _error(version, name, error.code)
            topic = context.store.image.topics[name]
    if topic is None:
        unknown = ErrorCode.unknown_topic_or_partition if name else ErrorCode.unknown_topic_id
        return _error(version, name, unknown, topic_id)  # Kafka echoes the id asked about
    return _topic(context, topic, context.store.image, version)


def _topic(
    context: BrokerContext, topic: TopicMetadata, image: MetadataImage, version: int
) -> MetadataTopic:
    partitions = context.metadata_partitions.of(topic, image, version)
    return MetadataTopic(
        ErrorCode.none.value, topic.name, topic.topic_id, topic.internal, partitions
    )


def _error(
    version: int, name: str | None, code: ErrorCode, topic_id: uuid.UUID | None = None
) -> MetadataTopic:
    """A topic's entry that carries only an error."""
    return MetadataTopic(code.value, name, topic_id, False, encode_partitions(version, ()))
