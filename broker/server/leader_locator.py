"""Where partitions' leaders are now, from the metadata image: the KIP-951 hints that
Produce and Fetch answers of NOT_LEADER_OR_FOLLOWER carry."""

from __future__ import annotations

from collections.abc import Iterable

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.leader_hints import CurrentLeader, NodeEndpoint

_HINTED = frozenset({ErrorCode.not_leader_or_follower.value, ErrorCode.fenced_leader_epoch.value})


def current_leader(
    image: MetadataImage, topic: str | None, index: int, error_code: int
) -> CurrentLeader | None:
    """The partition's leader and epoch when ``error_code`` says the client asked the
    wrong broker; otherwise None."""
    metadata = image.topics.get(topic) if topic is not None else None
    if error_code not in _HINTED or metadata is None:
        return None
    state = next((s for s in metadata.partitions if s.partition == index), None)
    return None if state is None else CurrentLeader(state.leader, state.leader_epoch)


def leader_endpoints(
    image: MetadataImage, leaders: Iterable[CurrentLeader | None], listener: str
) -> list[NodeEndpoint]:
    """The endpoints on ``listener`` of the brokers named by ``leaders``, each once."""
    ids = sorted({leader.leader_id for leader in leaders if leader is not None})
    found = []
    for node_id in ids:
        broker = image.brokers.get(node_id)
        endpoint = broker.endpoint(listener) if broker is not None else None
        if broker is not None and endpoint is not None:
            found.append(NodeEndpoint(node_id, endpoint.host, endpoint.port, broker.rack))
    return found
