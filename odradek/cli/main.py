"""The ``odradek`` command: one subcommand per module, each registering itself."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

# Each name's module is ``odradek.cli.<name>_command``, whose ``register`` adds it.
COMMANDS = (
    "broker",
    "topic",
    "produce",
    "consume",
    "demo",
    "group",
    "cluster",
    "mirror",
    "acl",
    "user",
    "transactions",
)


def build_parser(commands: Sequence[str] = COMMANDS) -> argparse.ArgumentParser:
    """The parser of the given subcommands; only their modules are imported."""
    parser = argparse.ArgumentParser(
        prog="odradek", description="Odradek: a Kafka-compatible distributed commit log."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"odradek.cli.{name}_command").register(subparsers)
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
    arguments = sys.argv[1:] if argv is None else list(argv)
    # The chosen subcommand's module alone: a broker starts without importing the clients.
    chosen = arguments[:1] if arguments[:1] and arguments[0] in COMMANDS else COMMANDS
    args = build_parser(chosen).parse_args(arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    sys.exit(run(args))
