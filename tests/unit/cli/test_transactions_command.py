"""``odradek transactions``: its tables from what the brokers answer, and which open
transaction ``abort`` picks."""

from __future__ import annotations

import pytest
from kafka.admin._transactions import (
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
    abort_at,
    description_row,
    listing_rows,
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


def producer(producer_id: int, start: int, coordinator_epoch: int = 3) -> ProducerState:
    return ProducerState(producer_id, 2, 10, 1_700_000_000_000, coordinator_epoch, start)


def test_producers_are_listed_by_id_with_none_where_no_transaction_is_open() -> None:
    assert producer_rows([producer(9, 40), producer(5, -1, coordinator_epoch=-1)]) == [
        (5, 2, -1, 10, 1_700_000_000_000, "None"),
        (9, 2, 3, 10, 1_700_000_000_000, 40),
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
