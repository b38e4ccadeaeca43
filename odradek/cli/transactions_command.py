"""``odradek transactions list|describe|describe-producers|find-hanging|abort``, like
kafka-transactions.

``abort`` ends a hanging transaction, one a partition holds open while its coordinator no
longer does (it would otherwise hold back every read_committed consumer of the partition):
it writes an ABORT marker at the partition's leader, as Kafka's admin client does. It needs
ALTER (or CLUSTER_ACTION) on the cluster.
"""

from __future__ import annotations

import argparse
import time

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    command,
    int_at_least,
    partition_number,
    status,
)
from odradek.cli.text_table import format_table

_offset = int_at_least(0)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "transactions",
        help="list, describe and abort transactions",
        description="Transactions, like kafka-transactions.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser(
        "list", help="every transactional id, its coordinator, producer id and state"
    )
    listing.set_defaults(run=_list)

    describe = actions.add_parser(
        "describe", help="the state, timeout, age and partitions of a transactional id"
    )
    describe.add_argument("--transactional-id", required=True, metavar="ID")
    describe.set_defaults(run=_describe)

    producers = actions.add_parser(
        "describe-producers",
        help="the producers a partition keeps state for, and where their open transactions start",
    )
    _add_partition(producers)
    producers.add_argument(
        "--broker-id",
        type=int_at_least(0),
        metavar="ID",
        help="ask this replica (default: the leader)",
    )
    producers.set_defaults(run=_describe_producers)

    find_hanging = actions.add_parser(
        "find-hanging",
        help="open transactions no coordinator will end, on a topic's or a broker's partitions",
    )
    find_hanging.add_argument("--topic", help="search this topic's partitions")
    find_hanging.add_argument("--partition", type=partition_number, help="(with --topic)")
    find_hanging.add_argument(
        "--broker-id", type=int_at_least(0), metavar="ID", help="search the partitions it holds"
    )
    find_hanging.add_argument(
        "--max-transaction-timeout",
        type=int_at_least(0),
        default=15,
        metavar="MINUTES",
        help="only transactions whose last write is older (default: 15, Kafka's"
        " transaction.max.timeout.ms)",
    )
    find_hanging.set_defaults(run=_find_hanging)

    abort = actions.add_parser(
        "abort",
        help="abort a hanging transaction on a partition (needs ALTER on the cluster)",
        description="Abort the open transaction of a partition, found by the offset it starts "
        "at (see describe-producers), or named by its producer.",
    )
    _add_partition(abort)
    abort.add_argument("--start-offset", type=_offset, metavar="OFFSET",
                       help="the first offset of the transaction")  # fmt: skip
    named = abort.add_argument_group("or the producer, for brokers older than Kafka 3.0")
    named.add_argument("--producer-id", type=int_at_least(0), metavar="ID")
    named.add_argument("--producer-epoch", type=int_at_least(0), metavar="EPOCH")
    named.add_argument("--coordinator-epoch", type=int, metavar="EPOCH")
    abort.set_defaults(run=_abort)

    for action in (listing, describe, producers, find_hanging, abort):
        add_client_options(action)


def _add_partition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partition", required=True, type=partition_number)


# kafka-python (about a hundred request schemas) is imported only when a command runs.


@command
def _list(args: argparse.Namespace) -> int:
    from odradek.cli import transaction_admin

    status(args, f"Listing transactions on every broker of {args.bootstrap_server}.")
    rows = transaction_admin.list_transactions(args)
    for line in format_table(transaction_admin.LIST_COLUMNS, rows):
        print(line)
    return 0


@command
def _describe(args: argparse.Namespace) -> int:
    from odradek.cli import transaction_admin

    status(args, f"Describing transactional id {args.transactional_id}.")
    row = transaction_admin.describe_transaction(
        args, args.transactional_id, int(time.time() * 1000)
    )
    for line in format_table(transaction_admin.DESCRIBE_COLUMNS, [row]):
        print(line)
    return 0


@command
def _describe_producers(args: argparse.Namespace) -> int:
    from odradek.cli import transaction_admin

    where = f"broker {args.broker_id}" if args.broker_id is not None else "the leader"
    status(args, f"Describing the producers of {args.topic}-{args.partition} on {where}.")
    rows = transaction_admin.describe_producers(args, args.topic, args.partition, args.broker_id)
    for line in format_table(transaction_admin.PRODUCER_COLUMNS, rows):
        print(line)
    return 0


@command
def _find_hanging(args: argparse.Namespace) -> int:
    from odradek.cli import transaction_admin

    if args.topic is None and args.broker_id is None:
        raise CliError("find-hanging needs --topic or --broker-id to limit the search")
    if args.partition is not None and args.topic is None:
        raise CliError("--partition needs --topic")
    scope = []
    if args.topic is not None:
        scope.append(f"topic {args.topic}")
    if args.broker_id is not None:
        scope.append(f"broker {args.broker_id}")
    status(args, f"Searching the partitions of {' and '.join(scope)} for hanging transactions.")
    rows = transaction_admin.find_hanging(
        args,
        args.topic,
        args.partition,
        args.broker_id,
        args.max_transaction_timeout * 60_000,
        int(time.time() * 1000),
    )
    for line in format_table(transaction_admin.HANGING_COLUMNS, rows):
        print(line)
    return 0


@command
def _abort(args: argparse.Namespace) -> int:
    from odradek.cli import transaction_admin

    if args.start_offset is not None:
        if args.producer_id is not None:
            raise CliError("give --start-offset or --producer-id, not both")
        status(args, f"Finding the transaction at offset {args.start_offset} of "
                     f"{args.topic}-{args.partition}.")  # fmt: skip
        transaction = transaction_admin.open_transaction_at(
            args, args.topic, args.partition, args.start_offset
        )
    else:
        transaction = transaction_admin.Abort(
            args.topic,
            args.partition,
            _required(args.producer_id, "--producer-id"),
            _required(args.producer_epoch, "--producer-epoch"),
            # -1 (no marker seen yet): 0, which no coordinator epoch is below, as Kafka's tool
            max(_required(args.coordinator_epoch, "--coordinator-epoch"), 0),
        )
    status(args, f"Aborting the transaction of {transaction}.")
    transaction_admin.abort(args, transaction)
    status(args, f"Aborted the transaction of {transaction}.")
    return 0


def _required(value: int | None, option: str) -> int:
    if value is None:
        raise CliError(
            f"the transaction to abort is named by --start-offset, or by --producer-id, "
            f"--producer-epoch and --coordinator-epoch: {option} is missing"
        )
    return value
