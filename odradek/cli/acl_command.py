"""``odradek acl add|list|remove``: access control lists, like kafka-acls.

A binding allows (or with ``--deny`` denies) a principal, from a host, operations on a
resource: a topic, a group, a transactional id or the cluster, named literally or by
prefix (``--prefixed``). ``list`` and ``remove`` take the same options as filters; what
is not given matches anything.
"""

from __future__ import annotations

import argparse
from enum import Enum

from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    status,
)
from odradek.cli.text_table import format_table

CLUSTER_NAME = "kafka-cluster"  # the one name of the cluster resource, as Kafka's
OPERATIONS = {
    operation.name.replace("_", "").lower(): operation
    for operation in AclOperation
    if operation not in (AclOperation.UNKNOWN, AclOperation.ANY)
}
COLUMNS = ("RESOURCE", "NAME", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "acl",
        help="add, list and remove access control lists",
        description="Access control lists, like kafka-acls.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="allow or deny a principal operations on a resource")
    _add_binding_options(add, required=True)
    add.add_argument(
        "--deny", action="store_true", help="deny the operations (a deny beats any allow)"
    )
    add.set_defaults(run=_add)

    listing = actions.add_parser("list", help="list the bindings that match the options")
    _add_binding_options(listing, required=False)
    listing.set_defaults(run=_list)

    remove = actions.add_parser("remove", help="remove the bindings that match the options")
    _add_binding_options(remove, required=False)
    remove.set_defaults(run=_remove)

    for action in (add, listing, remove):
        add_client_options(action)


def _add_binding_options(parser: argparse.ArgumentParser, *, required: bool) -> None:
    resource = parser.add_mutually_exclusive_group(required=required)
    resource.add_argument("--topic", metavar="NAME", help="a topic ('*': every topic)")
    resource.add_argument("--group", metavar="NAME", help="a consumer group ('*': every group)")
    resource.add_argument("--transactional-id", metavar="ID", help="a transactional id")
    resource.add_argument("--cluster", action="store_true", help="the cluster")
    parser.add_argument(
        "--prefixed", action="store_true", help="the name is a prefix of the resources' names"
    )
    parser.add_argument(
        "--principal",
        required=required,
        metavar="TYPE:NAME",
        help="who, e.g. User:alice, or User:* for everyone",
    )
    parser.add_argument(
        "--host", default="*" if required else None, help="from where (default: any host)"
    )
    parser.add_argument(
        "--operation",
        dest="operations",
        type=_operation,
        action="append",
        required=required,
        metavar="OPERATION",
        help=f"repeatable; one of: {', '.join(sorted(OPERATIONS))}",
    )


def _operation(text: str) -> AclOperation:
    operation = OPERATIONS.get(text.replace("_", "").replace("-", "").lower())
    if operation is None:
        raise argparse.ArgumentTypeError(
            f"unknown operation {text!r}; one of: {', '.join(sorted(OPERATIONS))}"
        )
    return operation


def _resource(args: argparse.Namespace, *, for_filter: bool) -> tuple[ResourceType, str | None]:
    if args.topic is not None:
        return ResourceType.TOPIC, args.topic
    if args.group is not None:
        return ResourceType.GROUP, args.group
    if args.transactional_id is not None:
        return ResourceType.TRANSACTIONAL_ID, args.transactional_id
    if args.cluster:
        return ResourceType.BROKER, CLUSTER_NAME
    assert for_filter  # argparse requires a resource to add
    return ResourceType.ANY, None


def _pattern_type(args: argparse.Namespace, *, for_filter: bool) -> ResourcePatternType:
    if args.prefixed:
        return ResourcePatternType.PREFIXED
    return ResourcePatternType.ANY if for_filter else ResourcePatternType.LITERAL


def _filters(args: argparse.Namespace) -> list[AclBindingFilter]:
    resource_type, name = _resource(args, for_filter=True)
    return [
        AclBindingFilter(
            resource_type,
            name,  # type: ignore[arg-type]  # None matches any name, as AclBindingFilter says
            _pattern_type(args, for_filter=True),
            args.principal,
            args.host,
            operation,
            AclPermissionType.ANY,
        )
        for operation in args.operations or [AclOperation.ANY]
    ]


def _rows(bindings: list[AclBinding]) -> list[tuple[str, ...]]:
    def name_of(value: object) -> str:
        if value == ResourceType.BROKER:
            return "CLUSTER"
        return value.name if isinstance(value, Enum) else str(value)

    return sorted(
        (
            name_of(b.restype),
            b.name,
            name_of(b.resource_pattern_type),
            b.principal,
            b.host,
            name_of(b.operation),
            name_of(b.permission_type),
        )
        for b in bindings
    )


def _print(bindings: list[AclBinding]) -> None:
    for line in format_table(COLUMNS, _rows(bindings)):
        print(line)


@command
def _add(args: argparse.Namespace) -> int:
    resource_type, name = _resource(args, for_filter=False)
    assert name is not None  # argparse requires a resource to add
    permission = AclPermissionType.DENY if args.deny else AclPermissionType.ALLOW
    bindings = [
        AclBinding(
            resource_type,
            name,
            _pattern_type(args, for_filter=False),
            args.principal,
            args.host,
            operation,
            permission,
        )
        for operation in args.operations
    ]
    status(args, f"Adding {len(bindings)} ACL binding(s) on {args.bootstrap_server}.")
    admin = AdminClient(client_config(args))  # must outlive the futures
    for future in admin.create_acls(bindings, request_timeout=args.timeout).values():
        try:
            future.result()
        except KafkaException as error:
            raise cluster_call_failed(args, error, "cannot add the ACL binding") from error
    status(args, "Added:")
    _print(bindings)
    return 0


@command
def _list(args: argparse.Namespace) -> int:
    status(args, f"Listing ACL bindings on {args.bootstrap_server}.")
    admin = AdminClient(client_config(args))
    bindings: list[AclBinding] = []
    for binding_filter in _filters(args):
        try:
            bindings += admin.describe_acls(binding_filter, request_timeout=args.timeout).result()
        except KafkaException as error:
            raise cluster_call_failed(args, error, "cannot list ACL bindings") from error
    _print(bindings)
    return 0


@command
def _remove(args: argparse.Namespace) -> int:
    if not (args.principal or args.operations or _resource(args, for_filter=True)[1]):
        raise CliError("name a resource, a principal or an operation: this would remove every ACL")
    status(args, f"Removing ACL bindings on {args.bootstrap_server}.")
    admin = AdminClient(client_config(args))  # must outlive the futures
    removed: list[AclBinding] = []
    for future in admin.delete_acls(_filters(args), request_timeout=args.timeout).values():
        try:
            removed += future.result()
        except KafkaException as error:
            raise cluster_call_failed(args, error, "cannot remove ACL bindings") from error
    status(args, f"Removed {len(removed)} ACL binding(s):")
    _print(removed)
    return 0
