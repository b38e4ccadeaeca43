"""What the client commands share: connection options, librdkafka config and error reporting.

Every client command takes ``--bootstrap-server`` (default from
``ODRADEK_BOOTSTRAP_SERVERS``, else 127.0.0.1:9092), ``--timeout`` (how long to
wait for the cluster), ``-X key=value`` (any librdkafka property, as kcat) and
``--quiet``. Failures reach the user as one plain sentence on stderr and exit
code 1; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException

BOOTSTRAP_ENV = "ODRADEK_BOOTSTRAP_SERVERS"
DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
DEFAULT_TIMEOUT_S = 30.0
EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130

Command = Callable[[argparse.Namespace], int]


class CliError(Exception):
    """A failure to report as one plain sentence, without a traceback."""


def key_value(text: str) -> tuple[str, str]:
    """argparse type for ``key=value`` arguments."""
    key, separator, value = text.partition("=")
    if not separator or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key, value


def int_at_least(minimum: int) -> Callable[[str], int]:
    """argparse type for integers of at least ``minimum`` (counts, sizes, partitions)."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}")
        return number

    return parse


positive_int = int_at_least(1)
partition_number = int_at_least(0)


def add_client_options(parser: argparse.ArgumentParser) -> None:
    """Add the connection and output options every client command takes."""
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--bootstrap-server",
        default=os.environ.get(BOOTSTRAP_ENV, DEFAULT_BOOTSTRAP),
        metavar="HOST:PORT[,...]",
        help=f"brokers to connect to (default: ${BOOTSTRAP_ENV} or {DEFAULT_BOOTSTRAP})",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long to wait for the cluster (default: {DEFAULT_TIMEOUT_S:g})",
    )
    group.add_argument(
        "-X",
        dest="client_properties",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a librdkafka client property; repeatable",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print only data and errors, no status"
    )


def client_config(
    args: argparse.Namespace, defaults: dict[str, Any] | None = None
) -> dict[str, Any]:
    """librdkafka config from the common options; ``-X`` overrides ``defaults``.

    librdkafka's own log lines are silenced: its errors surface as exceptions
    and delivery reports, which the commands turn into sentences.
    """
    config: dict[str, Any] = {"bootstrap.servers": args.bootstrap_server, "log_level": 0}
    config.update(defaults or {})
    config.update(args.client_properties)
    return config


def status(args: argparse.Namespace, message: str) -> None:
    """Tell the user what is happening, on stderr, unless ``--quiet``."""
    if not args.quiet:
        print(message, file=sys.stderr, flush=True)


def describe_kafka_error(error: KafkaError) -> str:
    """A Kafka or librdkafka error as a sentence fragment, e.g. 'topic already exists'."""
    text = str(error.str()).replace("Broker: ", "").replace("Local: ", "")
    return text[:1].lower() + text[1:]


def went_unanswered(error: KafkaException) -> bool:
    """Whether a request failed for want of an answer (not reachable, or timed out)."""
    return bool(error.args[0].code() in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT))


def cluster_call_failed(
    args: argparse.Namespace, error: KafkaException, doing: str = ""
) -> CliError:
    """A failed request as a sentence: what failed (``doing``) and why."""
    kafka_error: KafkaError = error.args[0]
    if went_unanswered(error):
        reason = (
            f"could not reach the cluster at {args.bootstrap_server} within "
            f"{args.timeout:g} s ({describe_kafka_error(kafka_error)})"
        )
    else:
        reason = describe_kafka_error(kafka_error)
    return CliError(f"{doing}: {reason}" if doing else reason)


def command(run: Command) -> Command:
    """Turn a command's ``CliError``, Kafka errors and Ctrl-C into a message and exit code."""

    @functools.wraps(run)
    def guarded(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except KafkaException as error:
            message = str(cluster_call_failed(args, error))
        except CliError as error:
            message = str(error)
        except BrokenPipeError:
            # The reader went away (``| head``): nothing left to say to it.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_FAILURE
        except OSError as error:
            message = f"{error.strerror or error}" + (
                f": {error.filename}" if error.filename else ""
            )
        except KeyboardInterrupt:
            print(file=sys.stderr)
            return EXIT_INTERRUPTED
        print(f"odradek {args.command}: error: {message}", file=sys.stderr)
        return EXIT_FAILURE

    return guarded
