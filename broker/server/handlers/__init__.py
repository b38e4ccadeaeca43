"""One module per Kafka API. ``API_HANDLERS`` is both the dispatch table and what
ApiVersions advertises, so nothing is advertised that is not served."""

from __future__ import annotations

from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.server.handlers import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    fetch,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
)
from odradek.broker.server.handlers.types import ApiHandler

# Topic-id versions (Produce 13, Fetch 13+, ...) stay out until topic ids are served.
API_HANDLERS: dict[int, ApiHandler] = {
    ApiKey.PRODUCE: ApiHandler(produce.handle, 3, 9),
    ApiKey.FETCH: ApiHandler(fetch.handle, 4, 12),
    ApiKey.LIST_OFFSETS: ApiHandler(list_offsets.handle, 1, 7),
    ApiKey.METADATA: ApiHandler(metadata.handle, 0, 12),
    ApiKey.API_VERSIONS: ApiHandler(api_versions.handle, 0, 4),
    ApiKey.CREATE_TOPICS: ApiHandler(create_topics.handle, 2, 7),
    ApiKey.DELETE_TOPICS: ApiHandler(delete_topics.handle, 1, 6),
    ApiKey.INIT_PRODUCER_ID: ApiHandler(init_producer_id.handle, 0, 4),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: ApiHandler(offset_for_leader_epoch.handle, 2, 4),
    ApiKey.DESCRIBE_CONFIGS: ApiHandler(describe_configs.handle, 0, 4),
    ApiKey.ALTER_CONFIGS: ApiHandler(alter_configs.handle, 0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: ApiHandler(incremental_alter_configs.handle, 0, 1),
    ApiKey.CREATE_PARTITIONS: ApiHandler(create_partitions.handle, 0, 3),
    ApiKey.DELETE_RECORDS: ApiHandler(delete_records.handle, 0, 2),
    ApiKey.DESCRIBE_CLUSTER: ApiHandler(describe_cluster.handle, 0, 1),
}


def is_supported(api_key: int, api_version: int) -> bool:
    spec = API_HANDLERS.get(api_key)
    return spec is not None and spec.min_version <= api_version <= spec.max_version
