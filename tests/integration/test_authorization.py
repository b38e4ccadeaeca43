"""Kafka's ACL authorization, end to end: one broker with authorizer.class.name set, a
SASL_PLAINTEXT listener with PLAIN users and a super user who sets up the ACLs.

- Kafka's own kafka-acls adds, lists (by topic, group and principal; literal and prefixed)
  and removes ACLs, judged by what it prints.
- A table: for each API a user calls, with and without the ACL Kafka requires (literal and
  prefixed, allow and deny, deny over allow, the wildcard principal, a host; on topics,
  groups, the cluster and transactional ids), the error code is the one Kafka answers;
  topics a user may not describe are invisible in Metadata, transactional ids in
  ListTransactions, and a transaction's topics in DescribeTransactions.
- Real clients (confluent-kafka, Kafka's console consumer) see Kafka's exceptions.
"""

from __future__ import annotations

import datetime
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from acl_wire import Session, filled
from broker_process import Broker, BrokerFactory, free_port, http_get
from cluster_harness import ClusterFactory
from confluent_kafka import Consumer, KafkaError, Producer
from kafka_tools import kafka_tool, run_kafka_tool
from kafka_wire import WireClient, build_batch, load_request_schema

from odradek.broker.protocol.entity_builder import build_entity

PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret",
             "carol": "carol-secret"}  # fmt: skip
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PASSWORDS.items())
    + ";"
)
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# Kafka's wire codes
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
LITERAL, PREFIXED = 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
DESCRIBE_CONFIGS, ALTER_CONFIGS = 10, 11
DENY, ALLOW = 2, 3
NONE, TAF, GAF, CAF, TXAF = 0, 29, 30, 31, 53
UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND = 3, 25, 69
OPERATION_NOT_ATTEMPTED, LOG_DIR_NOT_FOUND, MEMBER_ID_REQUIRED = 55, 57, 79
ELECTION_NOT_NEEDED, NO_REASSIGNMENT_IN_PROGRESS, RESOURCE_NOT_FOUND = 84, 85, 91
# answers a client retries: the coordinator is loading, elsewhere, or busy with the id
RETRIABLE = {14, 15, 16, 51}
TOPICS = ("t-alice", "pfx-1", "t-deny", "t-public", "t-secret")
DOOMED = ("t-doomed", "pfx-doomed", "pfx-doomed-2", "pfx-kept")  # for DeleteTopics
(PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR,
 JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP, DESCRIBE_GROUPS, LIST_GROUPS) = (
    0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16)  # fmt: skip
(CREATE_TOPICS, DELETE_TOPICS, DELETE_RECORDS, INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH,
 DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS, DESCRIBE_CONFIGS_API, ALTER_CONFIGS_API,
 ALTER_REPLICA_LOG_DIRS, DESCRIBE_LOG_DIRS, CREATE_PARTITIONS, DELETE_GROUPS, ELECT_LEADERS,
 INCREMENTAL_ALTER_CONFIGS, ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS,
 OFFSET_DELETE, DESCRIBE_CLIENT_QUOTAS, DESCRIBE_USER_SCRAM, ALTER_USER_SCRAM, UPDATE_FEATURES,
 DESCRIBE_CLUSTER, DESCRIBE_PRODUCERS, DESCRIBE_TOPIC_PARTITIONS) = (
    19, 20, 21, 22, 23, 29, 30, 31, 32, 33, 34, 35, 37, 42, 43, 44, 45, 46, 47, 48, 50, 51,
    57, 60, 61, 75)  # fmt: skip
ALTER_CLIENT_QUOTAS = 49
(ADD_PARTITIONS_TO_TXN, ADD_OFFSETS_TO_TXN, END_TXN, WRITE_TXN_MARKERS, TXN_OFFSET_COMMIT,
 DESCRIBE_TRANSACTIONS, LIST_TRANSACTIONS) = (24, 25, 26, 27, 28, 65, 66)  # fmt: skip
TRANSACTION_KEY = 1  # FindCoordinator's key type of a transactional id
BROKER_RESOURCE, TOPIC_RESOURCE = 4, 2


def acl(resource_type: int, name: str, principal: str, operation: int, permission: int = ALLOW,
        pattern: int = LITERAL, host: str = "*") -> dict[str, Any]:  # fmt: skip
    return {"resource_type": resource_type, "resource_name": name,
            "resource_pattern_type": pattern, "principal": principal, "host": host,
            "operation": operation, "permission_type": permission}  # fmt: skip


ACLS = [
    acl(TOPIC, "t-alice", "User:alice", ALL),
    acl(TOPIC, "pfx-", "User:alice", ALL, pattern=PREFIXED),
    acl(TOPIC, "t-deny", "User:alice", ALL),
    acl(TOPIC, "t-deny", "User:alice", READ, DENY),  # deny wins over the ALLOW of ALL
    acl(TOPIC, "t-public", "User:*", DESCRIBE),  # the wildcard principal
    acl(GROUP, "g-alice", "User:alice", ALL),
    acl(GROUP, "gp-", "User:alice", READ, pattern=PREFIXED),
    acl(GROUP, "gd-", "User:alice", DELETE, pattern=PREFIXED),
    acl(TOPIC, "t-doomed", "User:alice", DELETE),
    acl(TOPIC, "pfx-kept", "User:alice", DELETE, DENY),  # deny wins over the prefixed ALL
    acl(TRANSACTIONAL_ID, "tx-alice", "User:alice", WRITE),  # WRITE implies DESCRIBE
    acl(TRANSACTIONAL_ID, "txp-", "User:alice", WRITE, pattern=PREFIXED),
    acl(TRANSACTIONAL_ID, "txp-deny", "User:alice", WRITE, DENY),
    acl(TRANSACTIONAL_ID, "txd-", "User:alice", DESCRIBE, pattern=PREFIXED),
    # carol administers the cluster, from this host only
    *(acl(CLUSTER, "kafka-cluster", "User:carol", op, host="127.0.0.1")
      for op in (ALTER, DESCRIBE, CREATE, DESCRIBE_CONFIGS, ALTER_CONFIGS)),
    acl(CLUSTER, "kafka-cluster", "User:carol", ALTER, DENY, host="10.9.9.9"),  # not this host
]  # fmt: skip


@dataclass
class Secured:
    broker: Broker
    sasl_port: int
    directory: Path
    sessions: dict[str, Session]

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_port}"

    def session(self, user: str) -> Session:
        if user not in self.sessions:
            self.sessions[user] = Session(self.bootstrap, user, PASSWORDS[user])
        return self.sessions[user]

    def client_config(self, user: str) -> Path:
        path = self.directory / f"{user}.properties"
        path.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
            f' username="{user}" password="{PASSWORDS[user]}";\n'
        )
        return path


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Secured]:
    broker = module_broker_factory(start=False)
    port = free_port()
    broker.settings.update(
        {
            "listeners": f"PLAINTEXT://{broker.bootstrap},SASL_PLAINTEXT://127.0.0.1:{port}",
            "sasl.enabled.mechanisms": "PLAIN",
            "sasl.jaas.config": JAAS,
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": "User:admin",
        }
    )
    broker.start()
    setup = Secured(broker, port, tmp_path_factory.mktemp("acl-clients"), {})
    admin = setup.session("admin")
    created = admin.call(CREATE_ACLS, 3, creations=ACLS)
    assert [r.error_code.value for r in created.results] == [NONE] * len(ACLS)
    names = TOPICS + DOOMED
    topics = [{"name": name, "num_partitions": 1, "replication_factor": 1} for name in names]
    answer = admin.call(CREATE_TOPICS, 7, topics=topics, timeout=datetime.timedelta(seconds=10))
    assert [t.error_code.value for t in answer.topics] == [NONE] * len(names)
    records = bytes(build_batch([b"hello"]))
    for name in TOPICS:
        assert produce(admin, name, records) == NONE
    # the transaction coordinator's topic, and transactions for the table to describe (open:
    # one never begun has Kafka's start time -1, which the test client's decoder refuses)
    assert find_coordinator(admin, "tx-admin", TRANSACTION_KEY) == NONE
    for transactional_id in ("tx-admin", "txd-1", "txp-open"):
        assert add_partitions_to_txn(admin, begin(admin, transactional_id), ["t-public"]) == [NONE]
    yield setup
    for session in setup.sessions.values():
        session.close()


# -- requests, each answering the error code of the one thing it asks ----------------------

# One code, or one per item where Kafka answers item by item (DeleteTopics' topics,
# AddPartitionsToTxn's partitions, DescribeTransactions' ids).
Answer = int | list[int]


def first_error(whole: Any, part: Callable[[], Any]) -> int:
    """The request's own error code, else that of its one part (read only then: a refused
    request may name no parts)."""
    if whole.value != NONE:
        return int(whole.value)
    return int(part().value)


def settled(call: Callable[[], Any]) -> Any:
    """``call``'s answer once its error is not one a client retries (or 15 s have passed)."""
    deadline = time.monotonic() + 15
    answer = call()
    while answer.error_code.value in RETRIABLE and time.monotonic() < deadline:
        time.sleep(0.1)
        answer = call()
    return answer


def produce(
    session: Session,
    topic: str,
    records: bytes | None = None,
    transactional_id: str | None = None,
) -> int:
    data = records if records is not None else bytes(build_batch([b"x"]))
    answer = session.call(
        PRODUCE,
        9,
        transactional_id=transactional_id,
        acks=-1,
        timeout=datetime.timedelta(seconds=5),
        topic_data=[{"name": topic, "partition_data": [{"index": 0, "records": data}]}],
    )
    return int(answer.responses[0].partition_responses[0].error_code.value)


def fetch(session: Session, topic: str) -> int:
    answer = session.call(
        FETCH,
        11,
        replica_id=-1,
        max_bytes=1 << 20,
        session_epoch=-1,
        topics=[
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": 0,
                        "current_leader_epoch": -1,
                        "fetch_offset": 0,
                        "log_start_offset": -1,
                        "partition_max_bytes": 1 << 20,
                    }
                ],
            }
        ],
    )
    return int(answer.responses[0].partitions[0].error_code.value)


def list_offsets(session: Session, topic: str) -> int:
    answer = session.call(LIST_OFFSETS, 7, replica_id=-1, topics=[
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": -1}]}])  # fmt: skip
    return int(answer.topics[0].partitions[0].error_code.value)


def offset_for_leader_epoch(session: Session, topic: str) -> int:
    answer = session.call(OFFSET_FOR_LEADER_EPOCH, 4, replica_id=-1, topics=[
        {"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                         "leader_epoch": 0}]}])  # fmt: skip
    return int(answer.topics[0].partitions[0].error_code.value)


def metadata(session: Session, topics: list[str] | None, auto_create: bool = False) -> Any:
    named = None if topics is None else [{"name": name} for name in topics]
    return session.call(METADATA, 12, topics=named, allow_auto_topic_creation=auto_create)


def metadata_code(session: Session, topic: str, auto_create: bool = False) -> int:
    return int(metadata(session, [topic], auto_create).topics[0].error_code.value)


def create_topic(session: Session, name: str) -> int:
    answer = session.call(
        CREATE_TOPICS,
        7,
        timeout=datetime.timedelta(seconds=10),
        topics=[{"name": name, "num_partitions": 1, "replication_factor": 1}],
    )
    return int(answer.topics[0].error_code.value)


def delete_topics(session: Session, *names: str) -> list[int]:
    """Each topic's code: Kafka answers DeleteTopics topic by topic."""
    answer = session.call(DELETE_TOPICS, 6, timeout=datetime.timedelta(seconds=10), topics=[
        {"name": name, "topic_id": uuid.UUID(int=0)} for name in names])  # fmt: skip
    codes = {result.name: int(result.error_code.value) for result in answer.responses}
    return [codes[name] for name in names]


def create_partitions(session: Session, name: str) -> int:
    answer = session.call(
        CREATE_PARTITIONS,
        3,
        timeout=datetime.timedelta(seconds=10),
        validate_only=True,
        topics=[{"name": name, "count": 2, "assignments": None}],
    )
    return int(answer.results[0].error_code.value)


def delete_records(session: Session, topic: str) -> int:
    answer = session.call(DELETE_RECORDS, 2, timeout=datetime.timedelta(seconds=10), topics=[
        {"name": topic, "partitions": [{"partition_index": 0, "offset": 0}]}])  # fmt: skip
    return int(answer.topics[0].partitions[0].error_code.value)


def describe_producers(session: Session, topic: str) -> int:
    answer = session.call(DESCRIBE_PRODUCERS, 0,
                          topics=[{"name": topic, "partition_indexes": [0]}])  # fmt: skip
    return int(answer.topics[0].partitions[0].error_code.value)


def describe_topic_partitions(session: Session, topic: str) -> int:
    answer = session.call(DESCRIBE_TOPIC_PARTITIONS, 0, topics=[{"name": topic}],
                          response_partition_limit=100, cursor=None)  # fmt: skip
    return int(answer.topics[0].error_code.value)


def describe_configs(session: Session, kind: int, name: str) -> int:
    answer = session.call(DESCRIBE_CONFIGS_API, 4, resources=[
        {"resource_type": kind, "resource_name": name, "configuration_keys": None}])  # fmt: skip
    return int(answer.results[0].error_code.value)


def settable_config(kind: int) -> dict[str, str]:
    """A config a topic (or a broker, dynamically) may be given, and a valid value of it."""
    key = "retention.ms" if kind == TOPIC_RESOURCE else "log.retention.ms"
    return {"name": key, "value": "100000"}


def incremental_alter_configs(session: Session, kind: int, name: str) -> int:
    answer = session.call(INCREMENTAL_ALTER_CONFIGS, 1, validate_only=True, resources=[
        {"resource_type": kind, "resource_name": name,
         "configs": [{**settable_config(kind), "config_operation": 0}]}])  # fmt: skip
    return int(answer.responses[0].error_code.value)


def alter_configs(session: Session, kind: int, name: str) -> int:
    answer = session.call(ALTER_CONFIGS_API, 2, validate_only=True, resources=[
        {"resource_type": kind, "resource_name": name,
         "configs": [settable_config(kind)]}])  # fmt: skip
    return int(answer.responses[0].error_code.value)


def find_coordinator(session: Session, key: str, key_type: int = 0) -> int:
    answer = settled(lambda: session.call(FIND_COORDINATOR, 3, key=key, key_type=key_type))
    return int(answer.error_code.value)


def join_group(session: Session, group: str) -> int:
    """v4: a member without an id is first given one (MEMBER_ID_REQUIRED), and joins
    nothing, so no case leaves a member behind."""
    answer = session.call(JOIN_GROUP, 4, group_id=group, member_id="",
                          session_timeout=datetime.timedelta(seconds=10),
                          rebalance_timeout=datetime.timedelta(seconds=1),
                          protocol_type="consumer",
                          protocols=[{"name": "range", "metadata": b""}])  # fmt: skip
    return int(answer.error_code.value)


def heartbeat(session: Session, group: str) -> int:
    answer = session.call(HEARTBEAT, 4, group_id=group, generation_id=1, member_id="nobody")
    return int(answer.error_code.value)


def sync_group(session: Session, group: str) -> int:
    answer = session.call(
        SYNC_GROUP,
        5,
        group_id=group,
        generation_id=1,
        member_id="nobody",
        protocol_type="consumer",
        protocol_name="range",
        assignments=[],
    )
    return int(answer.error_code.value)


def leave_group(session: Session, group: str) -> int:
    answer = session.call(LEAVE_GROUP, 5, group_id=group, members=[{"member_id": "nobody"}])
    return first_error(answer.error_code, lambda: answer.members[0].error_code)


def offset_commit(session: Session, group: str, topic: str) -> int:
    answer = session.call(
        OFFSET_COMMIT,
        8,
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": 1,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "",
                    }
                ],
            }
        ],
    )
    return int(answer.topics[0].partitions[0].error_code.value)


def offset_fetch(session: Session, group: str, topic: str) -> int:
    """The group's error, else the partition's."""
    answer = session.call(OFFSET_FETCH, 8, groups=[
        {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}])  # fmt: skip
    found = answer.groups[0]
    return first_error(found.error_code, lambda: found.topics[0].partitions[0].error_code)


def offset_delete(session: Session, group: str, topic: str) -> int:
    answer = session.call(OFFSET_DELETE, 0, group_id=group, topics=[
        {"name": topic, "partitions": [{"partition_index": 0}]}])  # fmt: skip
    return first_error(answer.error_code, lambda: answer.topics[0].partitions[0].error_code)


def describe_group(session: Session, group: str) -> int:
    answer = session.call(DESCRIBE_GROUPS, 5, groups=[group], include_authorized_operations=True)
    return int(answer.groups[0].error_code.value)


def delete_group(session: Session, group: str) -> int:
    answer = session.call(DELETE_GROUPS, 2, groups_names=[group])
    return int(answer.results[0].error_code.value)


def init_producer(session: Session, transactional_id: str | None) -> Any:
    def call() -> Any:
        return session.call(INIT_PRODUCER_ID, 4, transactional_id=transactional_id,
                            transaction_timeout=datetime.timedelta(minutes=1), producer_id=-1,
                            producer_epoch=-1)  # fmt: skip

    return settled(call)


def init_producer_id(session: Session, transactional_id: str | None = None) -> int:
    return int(init_producer(session, transactional_id).error_code.value)


# -- transactions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TxnProducer:
    """A transactional producer as InitProducerId made it (-1 when it was refused)."""

    transactional_id: str
    producer_id: int
    epoch: int


def begin(session: Session, transactional_id: str) -> TxnProducer:
    answer = init_producer(session, transactional_id)
    return TxnProducer(transactional_id, int(answer.producer_id), int(answer.producer_epoch))


def in_transaction(
    session: Session, transactional_id: str, step: Callable[[TxnProducer], Answer]
) -> Answer:
    """``step``'s answer, asked by a fresh producer of the id, whose transaction is aborted
    afterwards so the next case finds the id idle."""
    producer = begin(session, transactional_id)
    try:
        return step(producer)
    finally:
        if producer.producer_id >= 0:
            end_txn(session, producer, commit=False)


def add_partitions_to_txn(session: Session, producer: TxnProducer, topics: list[str]) -> list[int]:
    """Each topic's code (its partition 0)."""
    answer = session.call(ADD_PARTITIONS_TO_TXN, 3,
                          v3_and_below_transactional_id=producer.transactional_id,
                          v3_and_below_producer_id=producer.producer_id,
                          v3_and_below_producer_epoch=producer.epoch,
                          v3_and_below_topics=[
                              {"name": topic, "partitions": [0]} for topic in topics])  # fmt: skip
    codes = {(topic.name, p.partition_index): int(p.partition_error_code.value)
             for topic in answer.results_by_topic_v3_and_below
             for p in topic.results_by_partition}  # fmt: skip
    return [codes[(topic, 0)] for topic in topics]


def add_offsets_to_txn(session: Session, producer: TxnProducer, group: str) -> int:
    answer = session.call(ADD_OFFSETS_TO_TXN, 3, transactional_id=producer.transactional_id,
                          producer_id=producer.producer_id, producer_epoch=producer.epoch,
                          group_id=group)  # fmt: skip
    return int(answer.error_code.value)


def end_txn(session: Session, producer: TxnProducer, commit: bool = True) -> int:
    answer = session.call(END_TXN, 3, transactional_id=producer.transactional_id,
                          producer_id=producer.producer_id, producer_epoch=producer.epoch,
                          committed=commit)  # fmt: skip
    return int(answer.error_code.value)


def commit_txn(session: Session, producer: TxnProducer, topic: str) -> int:
    """EndTxn's code, committing a transaction that added the topic."""
    add_partitions_to_txn(session, producer, [topic])
    return end_txn(session, producer)


def txn_offset_commit(session: Session, producer: TxnProducer, group: str, topic: str) -> int:
    """TxnOffsetCommit's code, sent after AddOffsetsToTxn as a producer sends it."""
    add_offsets_to_txn(session, producer, group)
    answer = session.call(
        TXN_OFFSET_COMMIT, 3, transactional_id=producer.transactional_id, group_id=group,
        producer_id=producer.producer_id, producer_epoch=producer.epoch, generation_id=-1,
        member_id="", group_instance_id=None,
        topics=[{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                "committed_leader_epoch": -1,
                                                "committed_metadata": ""}]}])  # fmt: skip
    return int(answer.topics[0].partitions[0].error_code.value)


def transaction_states(session: Session, *transactional_ids: str) -> Any:
    answer = session.call(DESCRIBE_TRANSACTIONS, 0, transactional_ids=list(transactional_ids))
    return answer.transaction_states


def describe_transactions(session: Session, *transactional_ids: str) -> list[int]:
    states = transaction_states(session, *transactional_ids)
    return [int(state.error_code.value) for state in states]


def write_txn_markers(session: Session) -> int:
    """An abort marker for a partition that does not exist: nothing is written."""
    answer = session.call(WRITE_TXN_MARKERS, 1, markers=[
        {"producer_id": 1, "producer_epoch": 0, "transaction_result": False, "coordinator_epoch": 0,
         "topics": [{"name": "t-alice", "partition_indexes": [7]}]}])  # fmt: skip
    return int(answer.markers[0].topics[0].partitions[0].error_code.value)


def describe_log_dirs(session: Session) -> int:
    return int(session.call(DESCRIBE_LOG_DIRS, 4, topics=None).error_code.value)


def alter_replica_log_dirs(session: Session) -> int:
    answer = session.call(ALTER_REPLICA_LOG_DIRS, 2, dirs=[
        {"path": "/nowhere", "topics": [{"name": "t-alice", "partitions": [0]}]}])  # fmt: skip
    return int(answer.results[0].partitions[0].error_code.value)


def elect_leaders(session: Session) -> int:
    answer = session.call(ELECT_LEADERS, 2, election_type=0, timeout=datetime.timedelta(seconds=5),
                          topic_partitions=[{"topic": "t-alice", "partitions": [0]}])  # fmt: skip
    return first_error(
        answer.error_code, lambda: answer.replica_election_results[0].partition_result[0].error_code
    )


def alter_reassignments(session: Session) -> int:
    """Cancels a reassignment of t-alice's partition 0, which has none."""
    answer = session.call(ALTER_PARTITION_REASSIGNMENTS, 0,
                          timeout=datetime.timedelta(seconds=5), topics=[
        {"name": "t-alice", "partitions": [{"partition_index": 0, "replicas": None}]}])  # fmt: skip
    return first_error(answer.error_code, lambda: answer.responses[0].partitions[0].error_code)


def list_reassignments(session: Session) -> int:
    answer = session.call(LIST_PARTITION_REASSIGNMENTS, 0,
                          timeout=datetime.timedelta(seconds=5), topics=None)  # fmt: skip
    return int(answer.error_code.value)


def update_features(session: Session) -> int:
    answer = session.call(UPDATE_FEATURES, 1, timeout=datetime.timedelta(seconds=5),
                          feature_updates=[{"feature": "metadata.version",
                                            "max_version_level": 25, "upgrade_type": 1}],
                          validate_only=True)  # fmt: skip
    return int(answer.results[0].error_code.value)


def describe_client_quotas(session: Session) -> int:
    answer = session.call(DESCRIBE_CLIENT_QUOTAS, 1, components=[], strict=False)
    return int(answer.error_code.value)


def alter_client_quotas(session: Session) -> int:
    entry = {"entity": [{"entity_type": "user", "entity_name": "nobody"}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}  # fmt: skip
    answer = session.call(ALTER_CLIENT_QUOTAS, 1, entries=[entry], validate_only=True)
    return int(answer.entries[0].error_code.value)


def describe_scram(session: Session) -> int:
    return int(session.call(DESCRIBE_USER_SCRAM, 0, users=None).error_code.value)


def alter_scram(session: Session) -> int:
    answer = session.call(ALTER_USER_SCRAM, 0, upsertions=[],
                          deletions=[{"name": "nobody", "mechanism": 2}])  # fmt: skip
    return int(answer.results[0].error_code.value)


def create_acls(session: Session) -> int:
    answer = session.call(CREATE_ACLS, 3, creations=[acl(TOPIC, "x", "User:x", READ)])
    return int(answer.results[0].error_code.value)


def describe_acls(session: Session) -> int:
    answer = session.call(DESCRIBE_ACLS, 3, resource_type_filter=1, resource_name_filter=None,
                          pattern_type_filter=1, principal_filter=None, host_filter=None,
                          operation=1, permission_type=1)  # fmt: skip
    return int(answer.error_code.value)


def delete_acls(session: Session) -> int:
    answer = session.call(DELETE_ACLS, 3, filters=[
        {"resource_type_filter": TOPIC, "resource_name_filter": "nothing-here",
         "pattern_type_filter": LITERAL, "principal_filter": None, "host_filter": None,
         "operation": 1, "permission_type": 1}])  # fmt: skip
    return int(answer.filter_results[0].error_code.value)


# -- the table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    user: str
    call: Callable[[Session], Answer]
    expected: Answer | tuple[Answer, ...]  # a tuple: the answers Kafka may give


def case(name: str, user: str, call: Callable[[Session], Answer], *expected: Answer) -> Case:
    return Case(name, user, call, expected if len(expected) > 1 else expected[0])


CASES = [
    case("produce literal", "alice", lambda s: produce(s, "t-alice"), NONE),
    case("produce prefixed", "alice", lambda s: produce(s, "pfx-1"), NONE),
    case("produce no acl", "bob", lambda s: produce(s, "t-alice"), TAF),
    case("produce other topic", "alice", lambda s: produce(s, "t-secret"), TAF),
    case("produce allowed beside a read deny", "alice", lambda s: produce(s, "t-deny"), NONE),
    # a request naming a transactional id needs WRITE on it too, else all of it is refused
    case("produce with a transactional id", "alice",
         lambda s: produce(s, "t-alice", transactional_id="tx-alice"), NONE),
    case("produce with a transactional id no acl", "alice",
         lambda s: produce(s, "t-alice", transactional_id="txd-1"), TXAF),
    case("fetch literal", "alice", lambda s: fetch(s, "t-alice"), NONE),
    case("fetch prefixed", "alice", lambda s: fetch(s, "pfx-1"), NONE),
    case("fetch deny beats allow", "alice", lambda s: fetch(s, "t-deny"), TAF),
    case("fetch no acl", "bob", lambda s: fetch(s, "t-alice"), TAF),
    case("list offsets wildcard principal", "bob", lambda s: list_offsets(s, "t-public"), NONE),
    case("list offsets no acl", "bob", lambda s: list_offsets(s, "t-secret"), TAF),
    case("offset for leader epoch", "alice", lambda s: offset_for_leader_epoch(s, "pfx-1"), NONE),
    case("offset for leader epoch no acl", "bob",
         lambda s: offset_for_leader_epoch(s, "t-secret"), TAF),
    case("metadata named", "alice", lambda s: metadata_code(s, "t-alice"), NONE),
    case("metadata named no acl", "alice", lambda s: metadata_code(s, "t-secret"), TAF),
    case("metadata named unknown no acl", "bob", lambda s: metadata_code(s, "nope"), TAF),
    case("metadata auto-create prefixed", "alice",
         lambda s: metadata_code(s, "pfx-auto", auto_create=True), NONE, 5),
    case("metadata auto-create describe only", "bob",
         lambda s: metadata_code(s, "t-public2", auto_create=True), TAF),
    case("create topic prefixed", "alice", lambda s: create_topic(s, "pfx-created"), NONE),
    case("create topic no acl", "bob", lambda s: create_topic(s, "pfx-bob"), TAF),
    case("create topic cluster create", "carol", lambda s: create_topic(s, "c-created"), NONE),
    case("delete topic literal", "alice", lambda s: delete_topics(s, "t-doomed"), [NONE]),
    case("delete topic prefixed", "alice", lambda s: delete_topics(s, "pfx-doomed"), [NONE]),
    case("delete topic deny beats allow", "alice", lambda s: delete_topics(s, "pfx-kept"), [TAF]),
    case("delete topic no acl", "bob", lambda s: delete_topics(s, "t-alice"), [TAF]),
    case("delete topic unknown", "alice", lambda s: delete_topics(s, "pfx-never"),
         [UNKNOWN_TOPIC_OR_PARTITION]),
    case("delete topic unknown no acl", "bob", lambda s: delete_topics(s, "pfx-never"), [TAF]),
    case("delete topics each its own", "alice",
         lambda s: delete_topics(s, "pfx-doomed-2", "t-secret"), [NONE, TAF]),
    case("create partitions", "alice", lambda s: create_partitions(s, "pfx-1"), NONE),
    case("create partitions no acl", "bob", lambda s: create_partitions(s, "pfx-1"), TAF),
    case("delete records", "alice", lambda s: delete_records(s, "t-alice"), NONE),
    case("delete records no acl", "bob", lambda s: delete_records(s, "t-alice"), TAF),
    case("describe producers", "alice", lambda s: describe_producers(s, "t-alice"), NONE),
    case("describe producers no acl", "bob", lambda s: describe_producers(s, "t-alice"), TAF),
    case("describe topic partitions", "alice",
         lambda s: describe_topic_partitions(s, "t-alice"), NONE),
    case("describe topic partitions no acl", "alice",
         lambda s: describe_topic_partitions(s, "t-secret"), TAF),
    case("describe topic config", "alice",
         lambda s: describe_configs(s, TOPIC_RESOURCE, "t-alice"), NONE),
    case("describe topic config no acl", "bob",
         lambda s: describe_configs(s, TOPIC_RESOURCE, "t-alice"), TAF),
    case("describe broker config", "carol", lambda s: describe_configs(s, BROKER_RESOURCE, "0"),
         NONE),
    case("describe broker config no acl", "alice",
         lambda s: describe_configs(s, BROKER_RESOURCE, "0"), CAF),
    case("alter topic config", "alice",
         lambda s: incremental_alter_configs(s, TOPIC_RESOURCE, "pfx-1"), NONE),
    case("alter topic config no acl", "bob",
         lambda s: incremental_alter_configs(s, TOPIC_RESOURCE, "pfx-1"), TAF),
    case("alter broker config", "carol",
         lambda s: incremental_alter_configs(s, BROKER_RESOURCE, "0"), NONE),
    case("alter broker config no acl", "alice",
         lambda s: incremental_alter_configs(s, BROKER_RESOURCE, "0"), CAF),
    case("alter configs", "alice", lambda s: alter_configs(s, TOPIC_RESOURCE, "t-alice"), NONE),
    case("alter configs no acl", "bob", lambda s: alter_configs(s, TOPIC_RESOURCE, "t-alice"),
         TAF),
    case("alter configs broker", "carol", lambda s: alter_configs(s, BROKER_RESOURCE, "0"), NONE),
    case("alter configs broker no acl", "alice", lambda s: alter_configs(s, BROKER_RESOURCE, "0"),
         CAF),
    case("find coordinator", "alice", lambda s: find_coordinator(s, "g-alice"), NONE),
    case("find coordinator no acl", "bob", lambda s: find_coordinator(s, "g-alice"), GAF),
    case("join group prefixed", "alice", lambda s: join_group(s, "gp-1"), MEMBER_ID_REQUIRED),
    case("join group no acl", "bob", lambda s: join_group(s, "g-alice"), GAF),
    case("heartbeat prefixed", "alice", lambda s: heartbeat(s, "gp-1"), UNKNOWN_MEMBER_ID),
    case("heartbeat no acl", "bob", lambda s: heartbeat(s, "g-alice"), GAF),
    case("sync group", "alice", lambda s: sync_group(s, "g-alice"), UNKNOWN_MEMBER_ID),
    case("sync group no acl", "bob", lambda s: sync_group(s, "g-alice"), GAF),
    case("leave group", "alice", lambda s: leave_group(s, "g-alice"), UNKNOWN_MEMBER_ID),
    case("leave group no acl", "bob", lambda s: leave_group(s, "g-alice"), GAF),
    case("offset commit", "alice", lambda s: offset_commit(s, "g-alice", "t-alice"), NONE),
    case("offset commit topic no acl", "alice",
         lambda s: offset_commit(s, "g-alice", "t-secret"), TAF),
    case("offset commit group no acl", "bob", lambda s: offset_commit(s, "g-alice", "t-alice"),
         GAF),
    case("offset fetch", "alice", lambda s: offset_fetch(s, "g-alice", "t-alice"), NONE),
    case("offset fetch topic no acl", "alice", lambda s: offset_fetch(s, "g-alice", "t-secret"),
         TAF),
    case("offset fetch group no acl", "bob", lambda s: offset_fetch(s, "g-alice", "t-alice"),
         GAF),
    case("offset delete prefixed", "alice", lambda s: offset_delete(s, "gd-none", "t-alice"),
         GROUP_ID_NOT_FOUND),
    case("offset delete group no acl", "bob", lambda s: offset_delete(s, "g-alice", "t-alice"),
         GAF),
    case("describe group", "alice", lambda s: describe_group(s, "g-alice"), NONE),
    case("describe group no acl", "bob", lambda s: describe_group(s, "g-alice"), GAF),
    case("delete group prefixed", "alice", lambda s: delete_group(s, "gd-none"),
         GROUP_ID_NOT_FOUND),
    case("delete group no acl", "bob", lambda s: delete_group(s, "g-alice"), GAF),
    case("init producer id by topic write", "alice", init_producer_id, NONE),
    case("init producer id no acl", "bob", init_producer_id, CAF),
    # transactions: WRITE on the transactional id (which implies DESCRIBE), then what each
    # API asks of topics and groups
    case("init producer id transactional literal", "alice",
         lambda s: init_producer_id(s, "tx-alice"), NONE),
    case("init producer id transactional prefixed", "alice",
         lambda s: init_producer_id(s, "txp-1"), NONE),
    case("init producer id transactional deny beats allow", "alice",
         lambda s: init_producer_id(s, "txp-deny"), TXAF),
    case("init producer id transactional describe only", "alice",
         lambda s: init_producer_id(s, "txd-1"), TXAF),
    case("init producer id transactional no acl", "bob",
         lambda s: init_producer_id(s, "tx-alice"), TXAF),
    case("add partitions to txn", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_partitions_to_txn(s, p, ["t-alice"])), [NONE]),
    case("add partitions to txn prefixed", "alice", lambda s: in_transaction(
        s, "txp-1", lambda p: add_partitions_to_txn(s, p, ["pfx-1"])), [NONE]),
    case("add partitions to txn topic no acl", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_partitions_to_txn(s, p, ["t-alice", "t-secret"])),
         [OPERATION_NOT_ATTEMPTED, TAF]),
    case("add partitions to txn internal topic", "admin", lambda s: in_transaction(
        s, "tx-admin", lambda p: add_partitions_to_txn(s, p, ["__consumer_offsets"])), [TAF]),
    case("add partitions to txn id no acl", "bob", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_partitions_to_txn(s, p, ["t-public"])), [TXAF]),
    case("add offsets to txn", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_offsets_to_txn(s, p, "g-alice")), NONE),
    case("add offsets to txn group no acl", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_offsets_to_txn(s, p, "g-secret")), GAF),
    case("add offsets to txn id no acl", "bob", lambda s: in_transaction(
        s, "tx-alice", lambda p: add_offsets_to_txn(s, p, "g-alice")), TXAF),
    case("end txn", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: commit_txn(s, p, "t-alice")), NONE),
    case("end txn id no acl", "bob", lambda s: in_transaction(
        s, "tx-alice", lambda p: end_txn(s, p)), TXAF),
    case("txn offset commit", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: txn_offset_commit(s, p, "g-alice", "t-alice")), NONE),
    case("txn offset commit topic no acl", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: txn_offset_commit(s, p, "g-alice", "t-secret")), TAF),
    case("txn offset commit group no acl", "alice", lambda s: in_transaction(
        s, "tx-alice", lambda p: txn_offset_commit(s, p, "g-secret", "t-alice")), GAF),
    case("txn offset commit id no acl", "bob", lambda s: in_transaction(
        s, "tx-alice", lambda p: txn_offset_commit(s, p, "g-alice", "t-alice")), TXAF),
    case("describe transactions prefixed write", "alice",
         lambda s: describe_transactions(s, "txp-open"), [NONE]),
    case("describe transactions prefixed describe", "alice",
         lambda s: describe_transactions(s, "txd-1"), [NONE]),
    case("describe transactions no acl", "bob",
         lambda s: describe_transactions(s, "tx-admin"), [TXAF]),
    case("describe transactions each its own", "alice",
         lambda s: describe_transactions(s, "txd-1", "tx-admin"), [NONE, TXAF]),
    case("find transaction coordinator by write", "alice",
         lambda s: find_coordinator(s, "tx-alice", TRANSACTION_KEY), NONE),
    case("find transaction coordinator prefixed", "alice",
         lambda s: find_coordinator(s, "txd-2", TRANSACTION_KEY), NONE),
    case("find transaction coordinator no acl", "bob",
         lambda s: find_coordinator(s, "tx-alice", TRANSACTION_KEY), TXAF),
    case("write txn markers cluster alter", "carol", write_txn_markers,
         UNKNOWN_TOPIC_OR_PARTITION),
    case("write txn markers no acl", "alice", write_txn_markers, CAF),
    case("describe log dirs", "carol", describe_log_dirs, NONE),
    case("describe log dirs no acl", "alice", describe_log_dirs, CAF),
    case("alter replica log dirs", "carol", alter_replica_log_dirs, LOG_DIR_NOT_FOUND),
    case("alter replica log dirs no acl", "alice", alter_replica_log_dirs, CAF),
    case("elect leaders", "carol", elect_leaders, ELECTION_NOT_NEEDED),
    case("elect leaders no acl", "alice", elect_leaders, CAF),
    case("alter reassignments", "carol", alter_reassignments, NO_REASSIGNMENT_IN_PROGRESS),
    case("alter reassignments no acl", "alice", alter_reassignments, CAF),
    case("list reassignments", "carol", list_reassignments, NONE),
    case("list reassignments no acl", "alice", list_reassignments, CAF),
    case("update features", "carol", update_features, NONE),
    case("update features no acl", "alice", update_features, CAF),
    case("describe client quotas", "carol", describe_client_quotas, NONE),
    case("describe client quotas no acl", "alice", describe_client_quotas, CAF),
    case("alter client quotas", "carol", alter_client_quotas, NONE),
    case("alter client quotas no acl", "alice", alter_client_quotas, CAF),
    case("describe scram", "carol", describe_scram, NONE),
    case("describe scram no acl", "alice", describe_scram, CAF),
    case("alter scram", "carol", alter_scram, RESOURCE_NOT_FOUND),
    case("alter scram no acl", "alice", alter_scram, CAF),
    case("create acls", "carol", create_acls, NONE),
    case("create acls no acl", "alice", create_acls, CAF),
    case("describe acls", "carol", describe_acls, NONE),
    case("describe acls no acl", "alice", describe_acls, CAF),
    case("delete acls no acl", "alice", delete_acls, CAF),
    case("delete acls cluster alter", "carol", delete_acls, NONE),
]  # fmt: skip


@pytest.mark.parametrize("item", CASES, ids=[c.name for c in CASES])
def test_each_api_answers_kafkas_code_with_and_without_the_acl(
    secured: Secured, item: Case
) -> None:
    answer = item.call(secured.session(item.user))
    expected = item.expected if isinstance(item.expected, tuple) else (item.expected,)
    assert answer in expected, f"{item.name} as {item.user}: {answer}, expected {item.expected}"


def test_metadata_of_all_topics_leaves_out_what_the_user_may_not_describe(
    secured: Secured,
) -> None:
    def visible(user: str) -> set[str]:
        return {t.name for t in metadata(secured.session(user), None).topics} & set(TOPICS)

    assert visible("alice") == {"t-alice", "pfx-1", "t-deny", "t-public"}
    assert visible("bob") == {"t-public"}
    assert visible("admin") == set(TOPICS)


def test_list_groups_shows_the_groups_a_user_may_describe(secured: Secured) -> None:
    for group in ("g-alice", "g-other"):
        assert offset_commit(secured.session("admin"), group, "t-public") == NONE

    def listed(user: str) -> set[str]:
        answer = secured.session(user).call(LIST_GROUPS, 4, states_filter=[])
        return {g.group_id for g in answer.groups}

    assert "g-other" not in listed("alice") and "g-alice" in listed("alice")
    assert {"g-alice", "g-other"} <= listed("carol")  # DESCRIBE on the cluster lists all


def test_list_transactions_shows_the_transactional_ids_a_user_may_describe(
    secured: Secured,
) -> None:
    for transactional_id in ("txp-listed", "tx-other"):
        assert begin(secured.session("admin"), transactional_id).producer_id >= 0

    def listed(user: str) -> set[str]:
        answer = secured.session(user).call(LIST_TRANSACTIONS, 1, state_filters=[],
                                            producer_id_filters=[], duration_filter=-1)  # fmt: skip
        assert answer.error_code.value == NONE
        return {t.transactional_id for t in answer.transaction_states}

    # prefixed WRITE (which implies DESCRIBE) and prefixed DESCRIBE
    assert {"txp-listed", "txd-1"} <= listed("alice")
    assert not {"tx-other", "tx-admin"} & listed("alice")
    assert listed("bob") == set()
    assert listed("carol") == set()  # unlike ListGroups, DESCRIBE on the cluster lists none
    assert {"txp-listed", "tx-other", "tx-admin", "txd-1"} <= listed("admin")


def test_describe_transactions_shows_only_the_topics_a_user_may_describe(
    secured: Secured,
) -> None:
    admin = secured.session("admin")
    producer = begin(admin, "txd-topics")
    assert add_partitions_to_txn(admin, producer, ["t-alice", "t-secret"]) == [NONE, NONE]

    def topics(user: str) -> set[str]:
        [state] = transaction_states(secured.session(user), "txd-topics")
        assert state.error_code.value == NONE
        return {t.topic for t in state.topics}

    try:
        assert topics("alice") == {"t-alice"}
        assert topics("admin") == {"t-alice", "t-secret"}
    finally:
        end_txn(admin, producer, commit=False)


def test_authorized_operations_are_those_allowed(secured: Secured) -> None:
    def cluster_operations(user: str) -> int:
        answer = secured.session(user).call(DESCRIBE_CLUSTER, 1,
                                            include_cluster_authorized_operations=True)  # fmt: skip
        return int(answer.cluster_authorized_operations)

    assert cluster_operations("alice") == 0  # no DESCRIBE on the cluster
    bits = {op for op in range(32) if cluster_operations("carol") >> op & 1}
    assert bits == {ALTER, DESCRIBE, CREATE, DESCRIBE_CONFIGS, ALTER_CONFIGS}
    answer = secured.session("bob").call(DESCRIBE_GROUPS, 5, groups=["g-alice"],
                                         include_authorized_operations=True)  # fmt: skip
    assert answer.groups[0].error_code.value == GAF
    answer = secured.session("alice").call(METADATA, 12, topics=[{"name": "t-public"}],
                                           include_topic_authorized_operations=True)  # fmt: skip
    assert answer.topics[0].topic_authorized_operations == 1 << DESCRIBE


def test_denials_are_logged_and_counted(secured: Secured) -> None:
    assert fetch(secured.session("bob"), "t-secret") == TAF
    log = secured.broker.log_path.read_text()
    assert re.search(
        r"Principal = User:bob is Denied operation = READ from host = 127\.0\.0\.1 on resource"
        r" = Topic:LITERAL:t-secret for request = Fetch",
        log,
    ), log[-2000:]
    # (the test harness writes the broker's command line, JAAS included, at the top)
    broker_lines = [line for line in log.splitlines() if " odradek." in line]
    assert not [line for line in broker_lines for p in PASSWORDS.values() if p in line]
    _, text = http_get(f"{secured.broker.http_url}/metrics")
    counted = re.search(r'odradek_authorization_denials_total\{resource_type="topic"\} (\S+)', text)
    assert counted is not None and float(counted.group(1)) >= 1


def test_acl_apis_refuse_what_kafka_refuses(secured: Secured) -> None:
    admin = secured.session("admin")
    answer = admin.call(CREATE_ACLS, 3, creations=[
        acl(CLUSTER, "not-the-cluster", "User:x", ALTER),
        acl(TOPIC, "", "User:x", READ),
        acl(TOPIC, "t", "no-colon", READ),
        acl(TOPIC, "t", "User:x", 1),  # ANY is a filter, not an operation
    ])  # fmt: skip
    assert [r.error_code.value for r in answer.results] == [42, 42, 42, 42]
    assert answer.results[0].error_message == (
        "The only valid name for the CLUSTER resource is kafka-cluster."
    )


# -- real clients -----------------------------------------------------------------------------


def test_confluent_kafka_sees_authorization_exceptions(secured: Secured) -> None:
    settings = {"bootstrap.servers": secured.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN", "sasl.username": "alice",
                "sasl.password": PASSWORDS["alice"]}  # fmt: skip
    errors: list[Any] = []
    producer = Producer({**settings, "message.timeout.ms": 5000, "enable.idempotence": False})
    producer.produce("t-secret", b"v", on_delivery=lambda error, _: errors.append(error))
    producer.flush(10)
    assert errors and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    consumer = Consumer({**settings, "group.id": "g-forbidden",
                                         "auto.offset.reset": "earliest"})  # fmt: skip
    consumer.subscribe(["t-alice"])
    deadline, seen = time.monotonic() + 15, None
    while time.monotonic() < deadline and seen is None:
        message = consumer.poll(0.5)
        if message is not None and message.error() is not None:
            seen = message.error().code()
    consumer.close()
    assert seen == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_kafka_console_consumer_reports_topic_authorization(secured: Secured) -> None:
    done = run_kafka_tool(
        "kafka-console-consumer", "--bootstrap-server", secured.bootstrap,
        "--consumer.config", str(secured.client_config("bob")), "--topic", "t-secret",
        "--from-beginning", "--timeout-ms", "5000",
    )  # fmt: skip
    assert "TopicAuthorizationException" in done.stdout + done.stderr


# -- kafka-acls ------------------------------------------------------------------------------


def kafka_acls(secured: Secured, *arguments: str) -> str:
    return kafka_tool(
        "kafka-acls",
        "--bootstrap-server",
        secured.bootstrap,
        "--command-config",
        str(secured.client_config("admin")),
        *arguments,
    )


def test_kafka_acls_adds_lists_and_removes_acls(secured: Secured) -> None:
    kafka_acls(secured, "--add", "--allow-principal", "User:dora", "--operation", "Read",
               "--operation", "Describe", "--topic", "orders", "--group", "dora-group")  # fmt: skip
    kafka_acls(secured, "--add", "--deny-principal", "User:dora", "--deny-host", "10.0.0.1",
               "--operation", "Write", "--topic", "orders-", "--resource-pattern-type",
               "prefixed")  # fmt: skip
    listed = kafka_acls(secured, "--list", "--topic", "orders")
    assert "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)" in listed
    assert "(principal=User:dora, host=*, operation=READ, permissionType=ALLOW)" in listed
    assert "(principal=User:dora, host=*, operation=DESCRIBE, permissionType=ALLOW)" in listed
    assert "orders-" not in listed  # --list names a literal resource: exactly that one
    prefixed = kafka_acls(secured, "--list", "--topic", "orders-",
                          "--resource-pattern-type", "prefixed")  # fmt: skip
    assert "name=orders-, patternType=PREFIXED" in prefixed
    assert "(principal=User:dora, host=10.0.0.1, operation=WRITE, permissionType=DENY)" in prefixed
    matching = kafka_acls(secured, "--list", "--topic", "orders-today",
                          "--resource-pattern-type", "match")  # fmt: skip
    assert "name=orders-, patternType=PREFIXED" in matching
    assert "name=orders, " not in matching
    group = kafka_acls(secured, "--list", "--group", "dora-group")
    assert "resourceType=GROUP, name=dora-group" in group and "operation=READ" in group
    by_principal = kafka_acls(secured, "--list", "--principal", "User:dora")
    for resource in ("name=orders,", "name=orders-,", "name=dora-group,"):
        assert resource in by_principal
    assert "User:alice" not in by_principal
    # the broker enforces what the tool added: dora's write to a prefixed topic is denied
    # only from 10.0.0.1, so her ACLs on orders give her READ there and nothing on orders-x
    kafka_acls(secured, "--remove", "--force", "--topic", "orders", "--group", "dora-group")
    kafka_acls(secured, "--remove", "--force", "--topic", "orders-",
               "--resource-pattern-type", "prefixed")  # fmt: skip
    after = kafka_acls(secured, "--list", "--principal", "User:dora")
    assert "User:dora" not in after.replace("ACLs for principal `User:dora`", "")


def acl_call(bootstrap: str, api_key: int, **fields: Any) -> Any:
    """One ACL request (v3) to the broker at ``bootstrap``, on PLAINTEXT (User:ANONYMOUS)."""
    schema = load_request_schema(api_key, 3)
    with WireClient.to(bootstrap) as wire:
        return wire.call(api_key, 3, build_entity(schema, filled(schema, fields)))


def test_an_acl_created_through_one_broker_is_enforced_by_every_broker_within_a_second(
    cluster_factory: ClusterFactory,
) -> None:
    settings = {"authorizer.class.name": STANDARD_AUTHORIZER,
                "allow.everyone.if.no.acl.found": "true"}  # fmt: skip
    cluster = cluster_factory(brokers=3, settings=settings)
    topic = cluster.create_topic(1, 3, prefix="guarded")
    denied = acl(TOPIC, topic, "User:ANONYMOUS", WRITE, DENY)
    created = acl_call(cluster.brokers[0].bootstrap, CREATE_ACLS, creations=[denied])
    assert created.results[0].error_code.value == NONE
    started = time.monotonic()
    for node in (1, 2):
        while True:
            listed = acl_call(
                cluster.brokers[node].bootstrap,
                DESCRIBE_ACLS,
                resource_type_filter=TOPIC,
                resource_name_filter=topic,
                pattern_type_filter=LITERAL,
                operation=1,
                permission_type=1,
            )
            if [r.resource_name for r in listed.resources] == [topic]:
                break
            assert time.monotonic() - started < 1.0, f"broker {node} does not list the ACL"
            time.sleep(0.02)
    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "message.timeout.ms": 10000})
    producer.produce(topic, b"x", on_delivery=lambda error, _: failures.append(error))
    producer.flush(15)
    assert [f.code() for f in failures] == [KafkaError.TOPIC_AUTHORIZATION_FAILED]
