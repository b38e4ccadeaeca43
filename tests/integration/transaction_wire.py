"""Transactions driven over the wire, request by request, as a client of either transaction
version speaks them (the tests of KIP-890's verification and of transaction version 2)."""

from __future__ import annotations

import datetime
import time
from typing import Any

from acl_wire import filled
from broker_process import unique_name
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka_wire import WireClient, build_batch, load_request_schema

from odradek.broker.protocol.entity_builder import build_entity

PRODUCE, LIST_OFFSETS, FIND_COORDINATOR, INIT_PRODUCER_ID = 0, 2, 10, 22
ADD_PARTITIONS_TO_TXN, END_TXN, DESCRIBE_TRANSACTIONS = 24, 26, 65
NONE, INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE = 0, 47, 48
END_TXN_BUMPS_FROM = 5
RETRIABLE = {14, 15, 16, 51}  # coordinator loading / not available / not coordinator, concurrent
READ_COMMITTED = 1


class Wire:
    """Requests written as dicts of the fields that matter (the rest neutral)."""

    def __init__(self, bootstrap: str) -> None:
        self.client = WireClient.to(bootstrap)

    def call(self, api_key: int, version: int, **fields: Any) -> Any:
        schema = load_request_schema(api_key, version)
        return self.client.call(api_key, version, build_entity(schema, filled(schema, fields)))

    def until_settled(self, api_key: int, version: int, **fields: Any) -> Any:
        """The answer once the coordinator is loaded and idle."""
        deadline = time.monotonic() + 20
        while True:
            answer = self.call(api_key, version, **fields)
            code = getattr(answer, "error_code", None)
            if code is None or code.value not in RETRIABLE or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)


class Transaction:
    def __init__(
        self,
        coordinator: Wire,
        transactional_id: str,
        timeout: datetime.timedelta = datetime.timedelta(minutes=1),
    ) -> None:
        self.coordinator = coordinator
        self.id = transactional_id
        assert coordinator_of(coordinator, transactional_id) >= 0  # makes __transaction_state
        answer = coordinator.until_settled(
            INIT_PRODUCER_ID, 4, transactional_id=transactional_id,
            transaction_timeout=timeout, producer_id=-1, producer_epoch=-1,
        )  # fmt: skip
        assert answer.error_code.value == NONE, answer
        self.producer = (int(answer.producer_id), int(answer.producer_epoch))
        self.sequences: dict[tuple[str, int], int] = {}

    def add(self, topic: str, partition: int) -> None:
        answer = self.coordinator.until_settled(
            ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=self.id,
            v3_and_below_producer_id=self.producer[0],
            v3_and_below_producer_epoch=self.producer[1],
            v3_and_below_topics=[{"name": topic, "partitions": [partition]}],
        )  # fmt: skip
        [result] = answer.results_by_topic_v3_and_below[0].results_by_partition
        assert result.partition_error_code.value == NONE, answer

    def produce(self, leader: Wire, topic: str, partition: int, version: int = 9) -> int:
        """One transactional batch; Produce v12+ (transaction version 2) adds the partition
        to the transaction itself. The answer's error code."""
        sequence = self.sequences.get((topic, partition), 0)
        batch = build_batch([b"x"], producer=(*self.producer, sequence), transactional=True)
        answer = leader.call(
            PRODUCE, version, transactional_id=self.id, acks=-1,
            timeout=datetime.timedelta(seconds=10),
            topic_data=[{"name": topic, "partition_data": [{"index": partition,
                                                            "records": bytes(batch)}]}],
        )  # fmt: skip
        code = int(answer.responses[0].partition_responses[0].error_code.value)
        if code == NONE:
            self.sequences[(topic, partition)] = sequence + 1
        return code

    def end(self, commit: bool, version: int = 3) -> None:
        """EndTxn, then wait for the markers; from v5 (transaction version 2) the producer
        goes on with the epoch the answer names, its sequences starting over."""
        answer = self.end_request(commit, version)
        assert answer.error_code.value == NONE, answer
        if version >= END_TXN_BUMPS_FROM:
            self.producer = (int(answer.producer_id), int(answer.producer_epoch))
            self.sequences.clear()
        self.wait_complete()

    def wait_complete(self) -> None:
        """Until the transaction's markers are written."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.describe().transaction_state.startswith("Complete"):
                return
            time.sleep(0.05)
        raise AssertionError("the transaction did not complete")

    def end_request(
        self, commit: bool, version: int, producer: tuple[int, int] | None = None
    ) -> Any:
        """EndTxn's answer, once the coordinator is loaded and idle."""
        producer_id, epoch = producer or self.producer
        return self.coordinator.until_settled(
            END_TXN, version, transactional_id=self.id, producer_id=producer_id,
            producer_epoch=epoch, committed=commit,
        )  # fmt: skip

    def describe(self) -> Any:
        described = self.coordinator.call(DESCRIBE_TRANSACTIONS, 0, transactional_ids=[self.id])
        return described.transaction_states[0]


def coordinator_of(wire: Wire, transactional_id: str) -> int:
    """FindCoordinator for a transactional id: its coordinator's node id."""
    found = wire.until_settled(FIND_COORDINATOR, 3, key_type=1, key=transactional_id)
    assert found.error_code.value == NONE, found
    return int(found.node_id)


def stable_and_end(leader: Wire, topic: str, partition: int) -> tuple[int, int]:
    """(last stable offset, log end offset) of the partition."""
    ends = []
    for isolation in (READ_COMMITTED, 0):
        answer = leader.call(
            LIST_OFFSETS, 7, replica_id=-1, isolation_level=isolation,
            topics=[{"name": topic, "partitions": [{"partition_index": partition,
                                                    "current_leader_epoch": -1,
                                                    "timestamp": -1}]}],
        )  # fmt: skip
        ends.append(int(answer.topics[0].partitions[0].offset))
    return ends[0], ends[1]


def create_topic(bootstrap: str, partitions: int, replication: int = 1) -> str:
    name = unique_name("verified")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication)])[name].result(30)
    return name
