"""``odradek transactions``: its tables from what the brokers answer, and which open
transaction ``abort`` picks."""

from __future__ import annotations

import pytest
from kafka.admin._transactions import (
    PartitionProducerState,
    ProducerState,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)
from kafka.structs import TopicPartition

from odradek.cli.client_options import CliError
from odradek.cli.main import build_parser
from odradek.cli.transaction_admin import (
    Abort,
    OpenTransaction,
    abort_at,
    description_row,
    hanging,
    hanging_rows,
    listing_rows,
    open_for_longer_than,
    producer_rows,
)


def test_listings_of_every_coordinator_are_one_table_sorted_by_transactional_id() -> None:
    rows = listing_rows({
        2: [TransactionListing("b", 7, TransactionState.ONGOING)],
        0: [TransactionListing("a", 3, TransactionState.COMPLETE_COMMIT)],
    })  # fmt: skip
    assert rows == [("a", 0, 3, "CompleteCommit"), ("b", 2, 7, "Ongoing")]


def test_a_description_has_the_duration_of_an_open_transaction_and_its_partitions() -> None:
    partitions = {TopicPartition("t", 1), TopicPartition("t", 0), TopicPartition("a", 2)}
    ongoing = TransactionDescription(1, TransactionState.ONGOING, 9, 4, 60000, 5000, partitions)
    assert description_row("app", ongoing, 7500) == (
        1, "app", 9, 4, "Ongoing", 60000, 5000, 2500, "a-2,t-0,t-1"
    )  # fmt: skip
    empty = ongoing._replace(state=TransactionState.EMPTY, transaction_start_time_ms=-1,
                             topic_partitions=set())  # fmt: skip
    assert description_row("app", empty, 7500)[4:] == ("Empty", 60000, "None", "None", "")


NOW = 1_700_000_000_000
MINUTE = 60_000


def producer(
    producer_id: int, start: int, coordinator_epoch: int = 3, last_timestamp: int = NOW
) -> ProducerState:
    return ProducerState(producer_id, 2, 10, last_timestamp, coordinator_epoch, start)


def test_producers_are_listed_by_id_with_none_where_no_transaction_is_open() -> None:
    assert producer_rows([producer(9, 40), producer(5, -1, coordinator_epoch=-1)]) == [
        (5, 2, -1, 10, NOW, "None"),
        (9, 2, 3, 10, NOW, 40),
    ]


def test_abort_picks_the_producer_whose_open_transaction_starts_at_the_offset() -> None:
    producers = [producer(5, -1), producer(6, 40), producer(7, 12, coordinator_epoch=-1)]
    assert abort_at("t", 0, producers, 40) == Abort("t", 0, 6, 2, 3)
    # a producer that never saw a marker: coordinator epoch 0, below none
    assert abort_at("t", 0, producers, 12) == Abort("t", 0, 7, 2, 0)
    for offset in (11, -1):
        with pytest.raises(CliError, match=f"no open transaction starts at offset {offset}"):
            abort_at("t", 0, producers, offset)


def test_abort_names_a_partition_and_describe_a_transactional_id() -> None:
    parser = build_parser()
    args = parser.parse_args(
        ["transactions", "abort", "--topic", "t", "--partition", "1", "--start-offset", "5"]
    )
    assert (args.topic, args.partition, args.start_offset, args.producer_id) == ("t", 1, 5, None)
    for argv in (
        ["transactions", "abort", "--topic", "t", "--start-offset", "5"],
        ["transactions", "abort", "--topic", "t", "--partition", "-1"],
        ["transactions", "describe"],
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)


def test_hanging_candidates_are_open_transactions_older_than_the_maximum_timeout() -> None:
    old = producer(1, 0, last_timestamp=NOW - 20 * MINUTE)
    young = producer(2, 5, last_timestamp=NOW - MINUTE)
    closed = producer(3, -1, last_timestamp=0)
    states = {
        TopicPartition("t", 1): PartitionProducerState([young]),
        TopicPartition("t", 0): PartitionProducerState([old, closed]),
    }
    assert open_for_longer_than(states, 15 * MINUTE, NOW) == [OpenTransaction("t", 0, old)]
    assert len(open_for_longer_than(states, 0, NOW)) == 2


def test_a_transaction_hangs_unless_its_coordinator_holds_the_partition() -> None:
    found = [
        OpenTransaction("t", p, producer(pid, 0)) for p, pid in ((0, 1), (1, 2), (2, 3), (3, 4))
    ]
    ids = {1: "held", 2: "elsewhere", 3: "expired"}  # 4: no transactional id at all
    held = {"held": {("t", 0)}, "elsewhere": {("t", 9)}, "expired": None}
    assert [t.producer.producer_id for t in hanging(found, ids, held)] == [2, 3, 4]
    assert hanging_rows(found[:1], NOW + 20 * MINUTE + 59_999) == [("t", 0, 1, 2, 3, 0, NOW, 20)]
