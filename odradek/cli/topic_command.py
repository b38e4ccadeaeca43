"""``odradek topic create|list|describe|delete``: topic administration, like kafka-topics."""

from __future__ import annotations

import argparse
from concurrent.futures import Future
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
    TopicMetadata,
)

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    key_value,
    positive_int,
    status,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "topic",
        help="create, list, describe and delete topics",
        description="Topic administration, like kafka-topics.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    create = actions.add_parser("create", help="create a topic")
    create.add_argument("name", metavar="NAME")
    create.add_argument(
        "--partitions", type=positive_int, default=-1, help="(default: the broker's num.partitions)"
    )
    create.add_argument(
        "--replication-factor",
        type=positive_int,
        default=-1,
        help="(default: the broker's default.replication.factor)",
    )
    create.add_argument(
        "--config",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="topic config, e.g. cleanup.policy=compact; repeatable",
    )
    create.add_argument(
        "--if-not-exists", action="store_true", help="succeed if the topic already exists"
    )
    create.set_defaults(run=_create)

    listing = actions.add_parser("list", help="list topic names")
    listing.set_defaults(run=_list)

    describe = actions.add_parser(
        "describe", help="show partitions, leaders, replicas, ISR and configs"
    )
    describe.add_argument("names", nargs="*", metavar="NAME", help="(default: every topic)")
    describe.set_defaults(run=_describe)

    delete = actions.add_parser("delete", help="delete topics")
    delete.add_argument("names", nargs="+", metavar="NAME")
    delete.set_defaults(run=_delete)

    for action in (create, listing, describe, delete):
        add_client_options(action)


def _admin(args: argparse.Namespace) -> AdminClient:
    return AdminClient(client_config(args))


def _topics(args: argparse.Namespace, admin: AdminClient) -> dict[str, TopicMetadata]:
    """Topic metadata by name, from one Metadata request for all topics (never auto-creates)."""
    try:
        topics: dict[str, TopicMetadata] = admin.list_topics(timeout=args.timeout).topics
    except KafkaException as error:
        raise cluster_call_failed(args, error, "cannot list topics") from error
    return topics


def _error_of(future: Future[Any]) -> KafkaException | None:
    try:
        future.result()
    except KafkaException as error:
        return error
    return None


@command
def _create(args: argparse.Namespace) -> int:
    shape = [f"{args.partitions} partitions"] if args.partitions > 0 else []
    if args.replication_factor > 0:
        shape.append(f"replication factor {args.replication_factor}")
    shape += [f"{key}={value}" for key, value in args.config]
    details = f" ({', '.join(shape)})" if shape else ""
    status(args, f"Creating topic {args.name}{details} on {args.bootstrap_server}.")
    new_topic = NewTopic(
        args.name,
        num_partitions=args.partitions,
        replication_factor=args.replication_factor,
        config=dict(args.config),
    )
    admin = _admin(args)  # must outlive the futures: its destruction cancels them
    futures = admin.create_topics(
        [new_topic], request_timeout=args.timeout, operation_timeout=args.timeout
    )
    error = _error_of(futures[args.name])
    if error is None:
        status(args, f"Created topic {args.name}.")
        return 0
    if args.if_not_exists and error.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
        status(args, f"Topic {args.name} already exists.")
        return 0
    raise cluster_call_failed(args, error, f"cannot create topic {args.name}")


@command
def _list(args: argparse.Namespace) -> int:
    status(args, f"Listing topics on {args.bootstrap_server}.")
    for name in sorted(_topics(args, _admin(args))):
        print(name)
    return 0


@command
def _describe(args: argparse.Namespace) -> int:
    admin = _admin(args)
    topics = _topics(args, admin)
    names = args.names or sorted(topics)
    missing = [name for name in names if name not in topics]
    if missing:
        raise CliError(f"no such topic: {', '.join(missing)}")
    status(args, f"Describing {len(names)} topic(s) on {args.bootstrap_server}.")
    configs = _topic_configs(args, admin, names)
    for name in names:
        for line in _describe_lines(topics[name], configs[name]):
            print(line)
    return 0


def _topic_configs(
    args: argparse.Namespace, admin: AdminClient, names: list[str]
) -> dict[str, dict[str, str]]:
    """Each topic's configs that differ from the broker defaults, by topic name."""
    if not names:
        return {}
    resources = [ConfigResource(ResourceType.TOPIC, name) for name in names]
    futures = admin.describe_configs(resources, request_timeout=args.timeout)
    configs: dict[str, dict[str, str]] = {}
    for resource, future in futures.items():
        try:
            entries = future.result()
        except KafkaException as error:
            raise cluster_call_failed(
                args, error, f"cannot read the configs of topic {resource.name}"
            ) from error
        configs[resource.name] = {
            key: entry.value for key, entry in sorted(entries.items()) if not entry.is_default
        }
    return configs


def _describe_lines(topic: TopicMetadata, configs: dict[str, str]) -> list[str]:
    """kafka-topics' layout: one line for the topic, one per partition."""
    partitions = [topic.partitions[number] for number in sorted(topic.partitions)]
    replication = len(partitions[0].replicas) if partitions else 0
    config_text = ",".join(f"{key}={value}" for key, value in configs.items())
    lines = [
        f"Topic: {topic.topic}\tPartitionCount: {len(partitions)}\t"
        f"ReplicationFactor: {replication}\tConfigs: {config_text}"
    ]
    if topic.error is not None:
        lines[0] += f"\tError: {topic.error.str()}"
    for partition in partitions:
        line = (
            f"\tTopic: {topic.topic}\tPartition: {partition.id}\tLeader: {partition.leader}\t"
            f"Replicas: {_ids(partition.replicas)}\tIsr: {_ids(partition.isrs)}"
        )
        if partition.error is not None:
            line += f"\tError: {partition.error.str()}"
        lines.append(line)
    return lines


def _ids(broker_ids: list[int]) -> str:
    return ",".join(str(broker_id) for broker_id in broker_ids)


@command
def _delete(args: argparse.Namespace) -> int:
    status(args, f"Deleting topic(s) {', '.join(args.names)} on {args.bootstrap_server}.")
    admin = _admin(args)  # must outlive the futures: its destruction cancels them
    futures = admin.delete_topics(
        args.names, request_timeout=args.timeout, operation_timeout=args.timeout
    )
    failures = []
    for name, future in futures.items():
        error = _error_of(future)
        if error is None:
            status(args, f"Deleted topic {name}.")
        else:
            failures.append(str(cluster_call_failed(args, error, f"cannot delete topic {name}")))
    if failures:
        raise CliError("; ".join(failures))
    return 0
