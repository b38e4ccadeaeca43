"""What ShareFetch and ShareAcknowledge share: resolving their topics, moving the member's
share session along, and applying acknowledgements."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.leader_locator import current_leader
from odradek.broker.share.share_partition_manager import Acknowledgement
from odradek.broker.share.share_sessions import CLOSE_EPOCH, OPEN_EPOCH, ShareSession
from odradek.broker.share.share_state import SharePartitionKey

NO_LEADER = {"leader_id": -1, "leader_epoch": -1}


@dataclass(frozen=True)
class ShareTarget:
    """A partition a request names: its share-partition, topic name (None: unknown id)
    and whether the sender may read it."""

    key: SharePartitionKey
    topic: str | None
    readable: bool

    def check(self) -> str:
        """The topic name, or the error this partition answers."""
        if self.topic is None:
            raise KafkaError(ErrorCode.unknown_topic_id)
        if not self.readable:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        return self.topic


def check_group(context: BrokerContext, request: Request) -> None:
    body = request.body
    if not body.group_id:
        raise KafkaError(ErrorCode.invalid_request, "the group id is empty")
    if not body.member_id:
        raise KafkaError(ErrorCode.invalid_request, "the member id is empty")
    context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)


def targets(
    context: BrokerContext, request: Request, partitions: Iterable[tuple[uuid.UUID, int]]
) -> dict[tuple[uuid.UUID, int], ShareTarget]:
    """The partitions by (topic id, index), with their names and READ rights resolved."""
    image = context.store.image
    wanted = list(partitions)
    names = {topic_id: image.topic_name(topic_id) for topic_id, _ in wanted}
    readable = context.authorization.allowed_names(
        request, AclOperation.READ, ResourceType.TOPIC, names.values()
    )
    group_id = request.body.group_id
    return {
        (topic_id, index): ShareTarget(
            SharePartitionKey(group_id, topic_id, index),
            names[topic_id],
            names[topic_id] in readable,
        )
        for topic_id, index in wanted
    }


def session_for(context: BrokerContext, request: Request) -> ShareSession:
    """The member's session after this request: opened (epoch 0), closed (epoch -1; the
    caller releases what the member held once its acknowledgements are applied) or
    continued."""
    body = request.body
    sessions = context.shares.sessions
    epoch = body.share_session_epoch
    if epoch == OPEN_EPOCH:
        session, previous = sessions.open(body.group_id, body.member_id, request.connection_id)
        if previous is not None:
            context.shares.release(previous)
        return session
    if epoch == CLOSE_EPOCH:
        return sessions.close(body.group_id, body.member_id)
    return sessions.advance(body.group_id, body.member_id, epoch)


def acknowledgements(topics: Sequence[Any]) -> dict[tuple[uuid.UUID, int], list[Acknowledgement]]:
    """The request's acknowledgement batches by partition."""
    found: dict[tuple[uuid.UUID, int], list[Acknowledgement]] = {}
    for topic in topics:
        for partition in topic.partitions:
            batches = [
                Acknowledgement(b.first_offset, b.last_offset, tuple(b.acknowledge_types))
                for b in partition.acknowledgement_batches
            ]
            if batches:
                found.setdefault((topic.topic_id, partition.partition_index), []).extend(batches)
    return found


async def acknowledge(
    context: BrokerContext,
    member_id: str,
    acked: dict[tuple[uuid.UUID, int], list[Acknowledgement]],
    resolved: dict[tuple[uuid.UUID, int], ShareTarget],
) -> dict[tuple[uuid.UUID, int], tuple[ErrorCode, str | None]]:
    """Apply each partition's acknowledgements; its error code and message."""
    results: dict[tuple[uuid.UUID, int], tuple[ErrorCode, str | None]] = {}
    for item, batches in acked.items():
        target = resolved[item]
        try:
            topic = target.check()
            await context.shares.partitions.acknowledge(target.key, topic, member_id, batches)
            results[item] = (ErrorCode.none, None)
        except Exception as error:  # every failure becomes this partition's error
            results[item] = error_of(error)
    return results


def release(context: BrokerContext, session: ShareSession) -> None:
    """The closed session's member gives back what it still holds."""
    context.shares.release(session)


def leader_of(context: BrokerContext, target: ShareTarget, code: ErrorCode) -> dict[str, int]:
    leader = current_leader(context.store.image, target.topic, target.key.partition, code)
    if leader is None:
        return NO_LEADER
    return {"leader_id": leader.leader_id, "leader_epoch": leader.leader_epoch}


def failed(error: Exception, lock_ms: int) -> dict[str, Any]:
    """A request-level failure: the whole answer is its error."""
    code, message = error_of(error)
    return {
        "throttle_time": 0,
        "error_code": code,
        "error_message": message,
        "acquisition_lock_timeout": lock_ms,
        "responses": [],
        "node_endpoints": [],
    }
