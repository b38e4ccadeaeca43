"""One module per Kafka API. ``API_HANDLERS`` is both the dispatch table and what
ApiVersions advertises, so nothing is advertised that is not served."""

from __future__ import annotations

from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.server.handlers import (
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    alter_user_scram_credentials,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_client_quotas,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_topic_partitions,
    describe_user_scram_credentials,
    elect_leaders,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sasl,
    sync_group,
    update_features,
)
from odradek.broker.server.handlers.types import ApiHandler

API_HANDLERS: dict[int, ApiHandler] = {
    ApiKey.PRODUCE: ApiHandler(produce.handle, 3, 13),
    ApiKey.FETCH: ApiHandler(fetch.handle, 4, 18),
    ApiKey.LIST_OFFSETS: ApiHandler(list_offsets.handle, 1, 11),
    ApiKey.METADATA: ApiHandler(metadata.handle, 0, 13),
    ApiKey.API_VERSIONS: ApiHandler(api_versions.handle, 0, 4),
    ApiKey.CREATE_TOPICS: ApiHandler(create_topics.handle, 2, 7),
    ApiKey.DELETE_TOPICS: ApiHandler(delete_topics.handle, 1, 6),
    ApiKey.INIT_PRODUCER_ID: ApiHandler(init_producer_id.handle, 0, 4),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: ApiHandler(offset_for_leader_epoch.handle, 2, 4),
    ApiKey.DESCRIBE_CONFIGS: ApiHandler(describe_configs.handle, 0, 4),
    ApiKey.ALTER_REPLICA_LOG_DIRS: ApiHandler(alter_replica_log_dirs.handle, 1, 2),
    ApiKey.DESCRIBE_LOG_DIRS: ApiHandler(describe_log_dirs.handle, 1, 5),
    ApiKey.ALTER_CONFIGS: ApiHandler(alter_configs.handle, 0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: ApiHandler(incremental_alter_configs.handle, 0, 1),
    ApiKey.CREATE_PARTITIONS: ApiHandler(create_partitions.handle, 0, 3),
    ApiKey.DELETE_RECORDS: ApiHandler(delete_records.handle, 0, 2),
    ApiKey.UPDATE_FEATURES: ApiHandler(update_features.handle, 0, 2),
    ApiKey.DESCRIBE_CLUSTER: ApiHandler(describe_cluster.handle, 0, 2),
    ApiKey.DESCRIBE_PRODUCERS: ApiHandler(describe_producers.handle, 0, 0),
    ApiKey.ELECT_LEADERS: ApiHandler(elect_leaders.handle, 0, 2),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: ApiHandler(alter_partition_reassignments.handle, 0, 0),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: ApiHandler(list_partition_reassignments.handle, 0, 0),
    ApiKey.FIND_COORDINATOR: ApiHandler(find_coordinator.handle, 0, 3),
    ApiKey.JOIN_GROUP: ApiHandler(join_group.handle, 0, 9),
    ApiKey.SYNC_GROUP: ApiHandler(sync_group.handle, 0, 5),
    ApiKey.HEARTBEAT: ApiHandler(heartbeat.handle, 0, 4),
    ApiKey.LEAVE_GROUP: ApiHandler(leave_group.handle, 0, 5),
    ApiKey.OFFSET_COMMIT: ApiHandler(offset_commit.handle, 2, 10),
    ApiKey.OFFSET_FETCH: ApiHandler(offset_fetch.handle, 1, 10),
    ApiKey.DESCRIBE_GROUPS: ApiHandler(describe_groups.handle, 0, 6),
    ApiKey.LIST_GROUPS: ApiHandler(list_groups.handle, 0, 5),
    # served by the connection on SASL listeners (sasl_authenticator)
    ApiKey.SASL_HANDSHAKE: ApiHandler(sasl.handle_handshake, 0, 1),
    ApiKey.SASL_AUTHENTICATE: ApiHandler(sasl.handle_authenticate, 0, 2),
    ApiKey.DELETE_GROUPS: ApiHandler(delete_groups.handle, 0, 2),
    ApiKey.OFFSET_DELETE: ApiHandler(offset_delete.handle, 0, 0),
    ApiKey.DESCRIBE_CLIENT_QUOTAS: ApiHandler(describe_client_quotas.handle, 0, 1),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: ApiHandler(
        describe_user_scram_credentials.handle, 0, 0
    ),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: ApiHandler(alter_user_scram_credentials.handle, 0, 0),
    ApiKey.DESCRIBE_TOPIC_PARTITIONS: ApiHandler(describe_topic_partitions.handle, 0, 0),
}


def is_supported(api_key: int, api_version: int) -> bool:
    spec = API_HANDLERS.get(api_key)
    return spec is not None and spec.min_version <= api_version <= spec.max_version
