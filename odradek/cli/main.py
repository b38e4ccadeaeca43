"""The ``odradek`` command: one subcommand per module, each registering itself."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Protocol


class _Registrar(Protocol):
    def __call__(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


def _registrars() -> list[_Registrar]:
    from odradek.cli import (
        acl_command,
        broker_command,
        cluster_command,
        consume_command,
        demo_command,
        group_command,
        mirror_command,
        produce_command,
        topic_command,
        transactions_command,
        user_command,
    )

    return [
        broker_command.register,
        topic_command.register,
        produce_command.register,
        consume_command.register,
        demo_command.register,
        group_command.register,
        cluster_command.register,
        mirror_command.register,
        acl_command.register,
        user_command.register,
        transactions_command.register,
    ]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="odradek", description="Odradek: a Kafka-compatible distributed commit log."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in _registrars():
        register(subparsers)
    return parser


def keep_test_tooling_out() -> None:
    """Make Hypothesis unimportable in this process unless something already imported it.

    kio registers Hypothesis strategies for its types at import whenever Hypothesis is
    installed (test environments): that takes 0.2-3 s per process, depending on whether a
    ``.hypothesis/`` cache exists in the working directory, and writes one there. No
    command uses them, and a broker must be ready in well under two seconds.
    """
    sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> None:
    """Parse arguments and run the chosen subcommand; its return value is the exit code."""
    keep_test_tooling_out()
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    sys.exit(run(args))
