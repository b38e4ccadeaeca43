"""``odradek user set-password|describe|delete``: SASL/SCRAM users, like kafka-configs
``--entity-type users`` with ``SCRAM-SHA-256=[...]`` / ``SCRAM-SHA-512=[...]``; and
``odradek user set-quota|remove-quota|quotas``: their client quotas, like kafka-configs
``--entity-type users [--entity-type clients]`` with ``producer_byte_rate=...``.

The password never appears on the command line (where ``ps`` would show it): it is read
from standard input when that is not a terminal, else prompted for twice. The broker gets
only a salted hash of it (KIP-554).
"""

from __future__ import annotations

import argparse
import getpass
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    int_at_least,
    key_value,
    status,
)
from odradek.cli.text_table import format_table

MECHANISMS = {"SCRAM-SHA-256": ScramMechanism.SCRAM_SHA_256,
              "SCRAM-SHA-512": ScramMechanism.SCRAM_SHA_512}  # fmt: skip
MIN_ITERATIONS, MAX_ITERATIONS = 4096, 16384  # what Kafka's brokers accept
QUOTA_KEYS = "producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "user",
        help="SASL/SCRAM users and their client quotas",
        description="SASL/SCRAM credentials and client quotas of users, like kafka-configs "
        "--entity-type users.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    set_password = actions.add_parser(
        "set-password",
        help="create a user or change their password (read from stdin, or prompted for)",
    )
    set_password.add_argument("name", metavar="NAME")
    _add_mechanism(set_password, "SCRAM-SHA-512")
    set_password.add_argument(
        "--iterations",
        type=_iterations,
        default=MIN_ITERATIONS,
        help=f"SCRAM iterations, {MIN_ITERATIONS}-{MAX_ITERATIONS} (default: {MIN_ITERATIONS})",
    )
    set_password.set_defaults(run=_set_password)

    describe = actions.add_parser("describe", help="list users and their SCRAM mechanisms")
    describe.add_argument("names", nargs="*", metavar="NAME", help="(default: every user)")
    describe.set_defaults(run=_describe)

    delete = actions.add_parser("delete", help="delete a user's SCRAM credentials")
    delete.add_argument("name", metavar="NAME")
    _add_mechanism(delete, None)
    delete.set_defaults(run=_delete)

    set_quota = actions.add_parser(
        "set-quota", help="set client quotas of a user (or <default>), or of one client id"
    )
    set_quota.add_argument("name", metavar="NAME")
    set_quota.add_argument(
        "quotas", nargs="+", type=_quota, metavar="KEY=VALUE", help=f"keys: {QUOTA_KEYS}"
    )
    _add_client_id(set_quota)
    set_quota.set_defaults(run=_set_quota)

    remove_quota = actions.add_parser("remove-quota", help="remove client quotas of a user")
    remove_quota.add_argument("name", metavar="NAME")
    remove_quota.add_argument("keys", nargs="+", metavar="KEY")
    _add_client_id(remove_quota)
    remove_quota.set_defaults(run=_remove_quota)

    quotas = actions.add_parser("quotas", help="list users' client quotas")
    quotas.add_argument("names", nargs="*", metavar="NAME", help="(default: every user)")
    quotas.set_defaults(run=_quotas)

    for action in (set_password, describe, delete, set_quota, remove_quota, quotas):
        add_client_options(action)


def _add_client_id(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--client-id", metavar="ID", help="the quota of this client id of the user (or <default>)"
    )


def _quota(text: str) -> tuple[str, float]:
    key, value = key_value(text)
    try:
        return key, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key}: {value!r} is not a number") from None


def _add_mechanism(parser: argparse.ArgumentParser, default: str | None) -> None:
    parser.add_argument(
        "--mechanism",
        choices=sorted(MECHANISMS),
        default=default,
        help=f"(default: {default or 'every mechanism the user has'})",
    )


_iterations = int_at_least(MIN_ITERATIONS)


def _read_password(name: str) -> str:
    if not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass(f"Password for {name}: ")
        if getpass.getpass("Again: ") != password:
            raise CliError("the passwords differ")
    if not password:
        raise CliError("the password is empty")
    return password


@command
def _set_password(args: argparse.Namespace) -> int:
    if args.iterations > MAX_ITERATIONS:
        raise CliError(f"--iterations: at most {MAX_ITERATIONS}, as Kafka's brokers accept")
    password = _read_password(args.name)
    status(args, f"Setting the {args.mechanism} password of {args.name}.")
    info = ScramCredentialInfo(MECHANISMS[args.mechanism], args.iterations)
    upsertion = UserScramCredentialUpsertion(args.name, info, password.encode())
    _alter(args, upsertion, f"cannot set the password of {args.name}")
    status(args, f"Set the {args.mechanism} password of {args.name}.")
    return 0


@command
def _describe(args: argparse.Namespace) -> int:
    status(args, f"Describing SCRAM users on {args.bootstrap_server}.")
    admin = AdminClient(client_config(args))
    answer = admin.describe_user_scram_credentials(args.names or None, request_timeout=args.timeout)
    try:  # a future per user named, or one future of them all
        if isinstance(answer, dict):
            described = {name: future.result() for name, future in answer.items()}
        else:
            described = answer.result()
    except KafkaException as error:
        raise cluster_call_failed(args, error, "cannot describe users") from error
    rows = [
        (user, info.mechanism.name.replace("_", "-"), info.iterations)
        for user, description in sorted(described.items())
        for info in description.scram_credential_infos
    ]
    for line in format_table(("USER", "MECHANISM", "ITERATIONS"), rows):
        print(line)
    return 0


@command
def _delete(args: argparse.Namespace) -> int:
    mechanisms = [args.mechanism] if args.mechanism else _mechanisms_of(args, args.name)
    if not mechanisms:
        raise CliError(f"user {args.name} has no SCRAM credentials")
    for mechanism in mechanisms:  # Kafka alters a user once per request
        status(args, f"Deleting the {mechanism} credentials of {args.name}.")
        deletion = UserScramCredentialDeletion(args.name, MECHANISMS[mechanism])
        _alter(args, deletion, f"cannot delete the {mechanism} credentials of {args.name}")
    status(args, f"Deleted {', '.join(mechanisms)} of {args.name}.")
    return 0


def _mechanisms_of(args: argparse.Namespace, name: str) -> list[str]:
    admin = AdminClient(client_config(args))
    futures = admin.describe_user_scram_credentials([name], request_timeout=args.timeout)
    assert isinstance(futures, dict)  # a future per user named
    try:
        infos = futures[name].result().scram_credential_infos
    except KafkaException as error:
        raise cluster_call_failed(args, error, f"cannot describe user {name}") from error
    return [info.mechanism.name.replace("_", "-") for info in infos]


def _alter(
    args: argparse.Namespace,
    alteration: UserScramCredentialUpsertion | UserScramCredentialDeletion,
    doing: str,
) -> None:
    admin = AdminClient(client_config(args))  # must outlive the futures
    futures = admin.alter_user_scram_credentials([alteration], request_timeout=args.timeout)
    try:
        futures[alteration.user].result()
    except KafkaException as error:
        raise cluster_call_failed(args, error, doing) from error


# The quota commands import kafka-python (it loads about a hundred request schemas) only
# when they run: every other command starts without it.


@command
def _set_quota(args: argparse.Namespace) -> int:
    from odradek.cli import client_quotas

    status(args, f"Setting {_listed(args.quotas)} for {_who(args)}.")
    client_quotas.alter(args, client_quotas.entity(args.name, args.client_id), dict(args.quotas))
    status(args, f"Set the quotas of {_who(args)}.")
    return 0


@command
def _remove_quota(args: argparse.Namespace) -> int:
    from odradek.cli import client_quotas

    status(args, f"Removing {', '.join(args.keys)} of {_who(args)}.")
    target = client_quotas.entity(args.name, args.client_id)
    client_quotas.alter(args, target, dict.fromkeys(args.keys))
    status(args, f"Removed the quotas of {_who(args)}.")
    return 0


@command
def _quotas(args: argparse.Namespace) -> int:
    from odradek.cli import client_quotas

    status(args, f"Describing user quotas on {args.bootstrap_server}.")
    rows = client_quotas.rows(client_quotas.describe(args, args.names))
    for line in format_table(("USER", "CLIENT-ID", "QUOTA", "VALUE"), rows):
        print(line)
    return 0


def _who(args: argparse.Namespace) -> str:
    user = f"user {args.name}"
    return f"client id {args.client_id} of {user}" if args.client_id is not None else user


def _listed(quotas: list[tuple[str, float]]) -> str:
    return ", ".join(f"{key}={value:g}" for key, value in quotas)
