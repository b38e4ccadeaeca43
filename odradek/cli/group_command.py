"""``odradek group list|describe|reset-offsets|delete``, like kafka-consumer-groups.

Offsets are reset only while a group has no members (the broker refuses a
standalone commit to an active group, as Kafka does); without ``--execute``
``reset-offsets`` only prints the plan.
"""

from __future__ import annotations

import argparse
import datetime
import enum
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    ConsumerGroupDescription,
    OffsetSpec,
)

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    status,
)

T = TypeVar("T")
NO_OFFSET = -1001  # librdkafka's OFFSET_INVALID: nothing committed
DESCRIBE_COLUMNS = (
    "GROUP",
    "TOPIC",
    "PARTITION",
    "CURRENT-OFFSET",
    "LOG-END-OFFSET",
    "LAG",
    "CONSUMER-ID",
    "HOST",
    "CLIENT-ID",
)
PLAN_COLUMNS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET")
_RESETTABLE = (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD, ConsumerGroupState.UNKNOWN)
EARLIEST = OffsetSpec.earliest()  # type: ignore[no-untyped-call]
LATEST = OffsetSpec.latest()  # type: ignore[no-untyped-call]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "group",
        help="list, describe, reset offsets of and delete consumer groups",
        description="Consumer groups, like kafka-consumer-groups.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    listing = actions.add_parser("list", help="list groups, their types and states")
    listing.set_defaults(run=_list)

    describe = actions.add_parser(
        "describe", help="members, assignments, committed offsets and lag"
    )
    describe.add_argument("groups", nargs="+", metavar="GROUP")
    describe.set_defaults(run=_describe)

    reset = actions.add_parser(
        "reset-offsets", help="move an inactive group's committed offsets (dry run by default)"
    )
    reset.add_argument("group", metavar="GROUP")
    scope = reset.add_mutually_exclusive_group(required=True)
    scope.add_argument(
        "--topic",
        dest="topics",
        action="append",
        type=topic_partitions,
        metavar="TOPIC[:P,P...]",
        help="a topic, optionally with partitions; repeatable",
    )
    scope.add_argument(
        "--all-topics", action="store_true", help="every topic the group has offsets for"
    )
    target = reset.add_mutually_exclusive_group(required=True)
    target.add_argument("--to-earliest", action="store_true", help="the log start offset")
    target.add_argument("--to-latest", action="store_true", help="the log end offset")
    target.add_argument(
        "--to-datetime",
        type=timestamp_ms,
        metavar="ISO-8601",
        help="the first offset at or after this time, e.g. 2024-05-01T12:00:00Z",
    )
    target.add_argument(
        "--to-offset", type=int, metavar="N", help="this offset, kept inside the log"
    )
    mode = reset.add_mutually_exclusive_group()
    mode.add_argument(
        "--dry-run", action="store_true", help="print the new offsets only (the default)"
    )
    mode.add_argument("--execute", action="store_true", help="commit the new offsets")
    reset.set_defaults(run=_reset_offsets)

    delete = actions.add_parser("delete", help="delete inactive groups and their offsets")
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    delete.set_defaults(run=_delete)

    for action in (listing, describe, reset, delete):
        add_client_options(action)


# --- argument types ------------------------------------------------------------------------------


def topic_partitions(text: str) -> tuple[str, list[int]]:
    """argparse type for ``TOPIC`` or ``TOPIC:0,2``; no partitions means all of them."""
    topic, _, partitions = text.partition(":")
    if not topic:
        raise argparse.ArgumentTypeError(f"expected TOPIC or TOPIC:P,P..., got {text!r}")
    try:
        numbers = [int(item) for item in partitions.split(",")] if partitions else []
    except ValueError:
        raise argparse.ArgumentTypeError(f"partitions must be numbers, got {text!r}") from None
    return topic, numbers


def timestamp_ms(text: str) -> int:
    """argparse type for an ISO-8601 time (local time if no zone is given), in epoch ms."""
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO-8601 time, got {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


# --- plumbing ------------------------------------------------------------------------------------


def _admin(args: argparse.Namespace) -> AdminClient:
    return AdminClient(client_config(args))


def _result(args: argparse.Namespace, future: Future[T], doing: str) -> T:
    try:
        return future.result()
    except KafkaException as error:
        raise cluster_call_failed(args, error, doing) from error


def _print_table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Columns padded to their widest cell, like kafka-consumer-groups."""
    cells = [list(columns), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(row[index]) for row in cells) for index in range(len(columns))]
    for row in cells:
        print(" ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _describe_groups(
    args: argparse.Namespace, admin: AdminClient, groups: list[str]
) -> dict[str, ConsumerGroupDescription]:
    futures = admin.describe_consumer_groups(groups, request_timeout=args.timeout)
    return {
        group: _result(args, future, f"cannot describe group {group}")
        for group, future in futures.items()
    }


def _committed(
    args: argparse.Namespace, admin: AdminClient, group: str
) -> dict[tuple[str, int], int]:
    """The group's committed offsets by (topic, partition)."""
    request = [ConsumerGroupTopicPartitions(group)]
    future = admin.list_consumer_group_offsets(request, request_timeout=args.timeout)[group]
    found = _result(args, future, f"cannot read the offsets of group {group}")
    return {
        (tp.topic, tp.partition): tp.offset
        for tp in found.topic_partitions or []
        if tp.offset != NO_OFFSET
    }


def _log_offsets(
    args: argparse.Namespace,
    admin: AdminClient,
    partitions: Iterable[tuple[str, int]],
    spec: OffsetSpec,
) -> dict[tuple[str, int], int]:
    """ListOffsets for each partition: earliest, latest or by timestamp (-1: none)."""
    wanted = {TopicPartition(topic, partition): spec for topic, partition in partitions}
    if not wanted:
        return {}
    futures = admin.list_offsets(wanted, request_timeout=args.timeout)
    return {
        (tp.topic, tp.partition): _result(
            args, future, f"cannot list offsets of {tp.topic}-{tp.partition}"
        ).offset
        for tp, future in futures.items()
    }


# --- list and describe ---------------------------------------------------------------------------


@command
def _list(args: argparse.Namespace) -> int:
    status(args, f"Listing groups on {args.bootstrap_server}.")
    admin = _admin(args)
    result = _result(
        args, admin.list_consumer_groups(request_timeout=args.timeout), "cannot list groups"
    )
    if result.errors:
        raise CliError(f"cannot list groups: {'; '.join(str(e) for e in result.errors)}")
    rows = sorted((g.group_id, g.type.name.title(), _state_name(g.state)) for g in result.valid)
    _print_table(("GROUP", "TYPE", "STATE"), rows)
    return 0


def _state_name(state: enum.Enum) -> str:
    """Kafka's spelling of a state (librdkafka's enum says PREPARING_REBALANCING)."""
    names: dict[enum.Enum, str] = {
        ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
        ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    }
    return names.get(state) or state.name.title()


@command
def _describe(args: argparse.Namespace) -> int:
    admin = _admin(args)
    status(args, f"Describing {len(args.groups)} group(s) on {args.bootstrap_server}.")
    descriptions = _describe_groups(args, admin, args.groups)
    for index, group in enumerate(args.groups):
        if index:
            print()
        _describe_one(args, admin, descriptions[group])
    return 0


def _describe_one(
    args: argparse.Namespace, admin: AdminClient, description: ConsumerGroupDescription
) -> None:
    group = description.group_id
    if description.state == ConsumerGroupState.DEAD:
        raise CliError(f"group {group} does not exist")
    owners: dict[tuple[str, int], Any] = {}
    for member in description.members:
        for tp in member.assignment.topic_partitions:
            owners[(tp.topic, tp.partition)] = member
    committed = _committed(args, admin, group)
    partitions = sorted(owners.keys() | committed.keys())
    ends = _log_offsets(args, admin, partitions, LATEST)
    members = len(description.members)
    print(
        f"Group {group}: {_state_name(description.state)}, "
        f"assignor {description.partition_assignor or '-'}, {members} member(s)"
    )
    rows = []
    for key in partitions:
        current = committed.get(key)
        end = ends[key]
        owner = owners.get(key)
        rows.append(
            (
                group,
                key[0],
                key[1],
                "-" if current is None else current,
                end,
                "-" if current is None else max(end - current, 0),
                owner.member_id if owner else "-",
                (owner.host or "-") if owner else "-",
                owner.client_id if owner else "-",
            )
        )
    _print_table(DESCRIBE_COLUMNS, rows)


# --- reset-offsets -------------------------------------------------------------------------------


@command
def _reset_offsets(args: argparse.Namespace) -> int:
    admin = _admin(args)
    group = args.group
    description = _describe_groups(args, admin, [group])[group]
    if description.state not in _RESETTABLE:
        raise CliError(
            f"group {group} has active members ({_state_name(description.state)}); "
            "stop its consumers before resetting offsets"
        )
    committed = _committed(args, admin, group)
    partitions = _reset_scope(args, admin, committed)
    targets = _targets(args, admin, partitions)
    rows = [
        (group, topic, partition, committed.get((topic, partition), "-"), offset)
        for (topic, partition), offset in sorted(targets.items())
    ]
    _print_table(PLAN_COLUMNS, rows)
    if not args.execute:
        status(args, "Dry run: nothing committed; add --execute to commit these offsets.")
        return 0
    request = ConsumerGroupTopicPartitions(
        group,
        [
            TopicPartition(topic, partition, offset)
            for (topic, partition), offset in targets.items()
        ],
    )
    future = admin.alter_consumer_group_offsets([request], request_timeout=args.timeout)[group]
    result = _result(args, future, f"cannot reset the offsets of group {group}")
    failed = [tp for tp in result.topic_partitions or [] if tp.error is not None]
    if failed:
        details = ", ".join(f"{tp.topic}-{tp.partition}: {tp.error.str()}" for tp in failed)
        raise CliError(f"cannot reset the offsets of group {group}: {details}")
    status(args, f"Reset the offsets of group {group} on {len(targets)} partition(s).")
    return 0


def _reset_scope(
    args: argparse.Namespace, admin: AdminClient, committed: dict[tuple[str, int], int]
) -> list[tuple[str, int]]:
    if args.all_topics:
        if not committed:
            raise CliError(f"group {args.group} has no committed offsets")
        return sorted(committed)
    try:
        topics = admin.list_topics(timeout=args.timeout).topics
    except KafkaException as error:
        raise cluster_call_failed(args, error, "cannot list topics") from error
    partitions = []
    for topic, numbers in args.topics:
        if topic not in topics or topics[topic].error is not None:
            raise CliError(f"no such topic: {topic}")
        existing = sorted(topics[topic].partitions)
        unknown = [number for number in numbers if number not in existing]
        if unknown:
            raise CliError(f"topic {topic} has no partition {', '.join(map(str, unknown))}")
        partitions += [(topic, number) for number in numbers or existing]
    return partitions


def _targets(
    args: argparse.Namespace, admin: AdminClient, partitions: list[tuple[str, int]]
) -> dict[tuple[str, int], int]:
    """The new offset of each partition, kept between the log start and end like Kafka."""
    earliest = _log_offsets(args, admin, partitions, EARLIEST)
    latest = _log_offsets(args, admin, partitions, LATEST)
    if args.to_earliest:
        return earliest
    if args.to_latest:
        return latest
    if args.to_datetime is not None:
        found = _log_offsets(args, admin, partitions, OffsetSpec.for_timestamp(args.to_datetime))
        # no record at or after the time: start after the last one
        return {key: offset if offset >= 0 else latest[key] for key, offset in found.items()}
    return {key: min(max(args.to_offset, earliest[key]), latest[key]) for key in partitions}


# --- delete --------------------------------------------------------------------------------------


@command
def _delete(args: argparse.Namespace) -> int:
    status(args, f"Deleting group(s) {', '.join(args.groups)} on {args.bootstrap_server}.")
    admin = _admin(args)  # must outlive the futures: its destruction cancels them
    futures = admin.delete_consumer_groups(args.groups, request_timeout=args.timeout)
    failures = []
    for group, future in futures.items():
        try:
            future.result()
        except KafkaException as error:
            failures.append(str(cluster_call_failed(args, error, f"cannot delete group {group}")))
        else:
            status(args, f"Deleted group {group}.")
    if failures:
        raise CliError("; ".join(failures))
    return 0
