"""``odradek consume TOPIC``: print records of chosen partitions from an offset, like kcat -C.

Partitions are assigned directly (no consumer group, nothing committed).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from contextlib import suppress
from typing import IO

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    describe_kafka_error,
    partition_number,
    positive_int,
    status,
)
from odradek.cli.progress import Progress

DEFAULT_FORMAT = "%s\\n"
# librdkafka needs a group id even for assigned partitions; nothing joins or commits with it.
UNUSED_GROUP_ID = "odradek-cli-consume"
BATCH = 1000
POLL_TIMEOUT_S = 0.5
_TRANSIENT = {KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._RESOLVE}

_LOGICAL_OFFSETS = {"beginning": OFFSET_BEGINNING, "end": OFFSET_END}

StartOffset = int | str  # an offset, -N records before the end, or "beginning" / "end"
Field = Callable[[Message], bytes]

_FIELDS: dict[str, Field] = {
    "k": lambda message: message.key() or b"",
    "s": lambda message: message.value() or b"",
    "K": lambda message: b"%d" % len(message.key() or b""),
    "S": lambda message: b"%d" % len(message),
    "t": lambda message: str(message.topic()).encode(),
    "p": lambda message: str(message.partition()).encode(),
    "o": lambda message: str(message.offset()).encode(),
    "T": lambda message: b"%d" % message.timestamp()[1],
    "h": lambda message: _headers(message),
}
_ESCAPES = {"n": b"\n", "t": b"\t", "r": b"\r", "\\": b"\\", "%": b"%"}
_TOKEN = re.compile(r"%(.)|\\(.)|([^%\\]+)", re.DOTALL)

Formatter = Callable[[Message], bytes]


def _headers(message: Message) -> bytes:
    headers = message.headers() or []
    pairs = headers.items() if isinstance(headers, dict) else headers
    return b",".join(_bytes(key) + b"=" + _bytes(value) for key, value in pairs)


def _bytes(text: str | bytes | None) -> bytes:
    return text.encode() if isinstance(text, str) else text or b""


def compile_format(text: str) -> Formatter:
    """kcat-style format: %k key, %s value, %K/%S their lengths, %t topic, %p partition,
    %o offset, %T timestamp (ms), %h headers (k=v,...), %% percent; escapes \\n \\t \\r \\\\.
    """
    matches = list(_TOKEN.finditer(text))
    if sum(len(match.group(0)) for match in matches) != len(text):
        raise argparse.ArgumentTypeError(f"format ends inside a token: {text!r}")
    parts: list[bytes | Field] = []
    for match in matches:
        token, escape, literal = match.groups()
        if token is not None:
            if token == "%":
                parts.append(b"%")
            elif token in _FIELDS:
                parts.append(_FIELDS[token])
            else:
                raise argparse.ArgumentTypeError(f"unknown format token %{token}")
        elif escape is not None:
            parts.append(_ESCAPES.get(escape, b"\\" + escape.encode()))
        else:
            parts.append(literal.encode())

    def render(message: Message) -> bytes:
        return b"".join(part if isinstance(part, bytes) else part(message) for part in parts)

    return render


def start_offset(text: str) -> StartOffset:
    """beginning, end, an offset N, or -N: N records before the end (resolved later)."""
    if text in _LOGICAL_OFFSETS:
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected beginning, end, an offset or -N records from the end, got {text!r}"
        ) from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "consume",
        help="print records of a topic",
        description=__doc__.splitlines()[0].replace("``", "") + " No consumer group is used.",
    )
    parser.add_argument("topic", metavar="TOPIC")
    parser.add_argument(
        "--partition",
        dest="partitions",
        type=partition_number,
        action="append",
        metavar="P",
        help="read only partition P; repeatable (default: all)",
    )
    parser.add_argument(
        "--offset",
        type=start_offset,
        default="beginning",
        metavar="beginning|end|N|-N",
        help="where to start in each partition; -N is N records before the end "
        "(default: beginning)",
    )
    parser.add_argument("--count", type=positive_int, metavar="N", help="stop after N records")
    parser.add_argument(
        "--exit", action="store_true", help="stop when every partition is read to its end"
    )
    parser.add_argument(
        "--format",
        dest="formatter",
        type=compile_format,
        default=DEFAULT_FORMAT,
        metavar="FORMAT",
        help="kcat-style output format: %%k key, %%s value, %%K/%%S their lengths, %%t topic, "
        "%%p partition, %%o offset, %%T timestamp (ms), %%h headers, \\n \\t "
        f"(default: {DEFAULT_FORMAT.replace('%', '%%')})",
    )
    add_client_options(parser)
    parser.set_defaults(run=_consume)


@command
def _consume(args: argparse.Namespace) -> int:
    consumer = Consumer(
        client_config(
            args,
            {
                "group.id": UNUSED_GROUP_ID,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",
            },
        )
    )
    try:
        assignment = _assignment(args, consumer)
        partitions = ",".join(str(partition.partition) for partition in assignment)
        status(
            args, f"Consuming {args.topic} partitions {partitions} from {_describe_start(args)}."
        )
        consumer.assign(assignment)
        progress = Progress("consumed", total=args.count, enabled=not args.quiet)
        with suppress(KeyboardInterrupt):  # the usual way to stop following a topic
            _print_records(args, consumer, len(assignment), progress, sys.stdout.buffer)
        status(args, f"Consumed from {args.topic}: {progress.summary()}.")
    finally:
        consumer.close()
    return 0


def _describe_start(args: argparse.Namespace) -> str:
    if args.offset in _LOGICAL_OFFSETS:
        return f"the {args.offset}"
    if args.offset < 0:
        return f"{-args.offset} records before the end"
    return f"offset {args.offset}"


def _assignment(args: argparse.Namespace, consumer: Consumer) -> list[TopicPartition]:
    """The partitions to read, each with its resolved start offset."""
    try:
        metadata = consumer.list_topics(args.topic, timeout=args.timeout)
    except KafkaException as error:
        raise cluster_call_failed(args, error, f"cannot look up topic {args.topic}") from error
    topic = metadata.topics.get(args.topic)
    if topic is None or topic.error is not None:
        reason = describe_kafka_error(topic.error) if topic and topic.error else "unknown topic"
        raise CliError(f"cannot consume topic {args.topic}: {reason}")
    numbers = args.partitions or sorted(topic.partitions)
    missing = sorted(set(numbers) - set(topic.partitions))
    if missing:
        raise CliError(
            f"topic {args.topic} has no partition {', '.join(map(str, missing))} "
            f"(it has {len(topic.partitions)})"
        )
    return [
        TopicPartition(args.topic, number, _resolve_offset(args, consumer, number))
        for number in dict.fromkeys(numbers)
    ]


def _resolve_offset(args: argparse.Namespace, consumer: Consumer, partition: int) -> int:
    if args.offset in _LOGICAL_OFFSETS:
        return _LOGICAL_OFFSETS[args.offset]
    if args.offset >= 0:
        return int(args.offset)
    try:
        low, high = consumer.get_watermark_offsets(
            TopicPartition(args.topic, partition), timeout=args.timeout
        )
    except KafkaException as error:
        raise cluster_call_failed(
            args, error, f"cannot read the offsets of {args.topic} partition {partition}"
        ) from error
    return max(int(low), int(high) + int(args.offset))


def _print_records(
    args: argparse.Namespace,
    consumer: Consumer,
    partition_count: int,
    progress: Progress,
    output: IO[bytes],
) -> None:
    """Write formatted records until --count, --exit or Ctrl-C; transient errors only warn."""
    at_end: set[int] = set()
    while True:
        for message in consumer.consume(BATCH, POLL_TIMEOUT_S):
            error = message.error()
            if error is None:
                at_end.discard(message.partition())
                output.write(args.formatter(message))
                progress.add(1, len(message))
                if progress.records == args.count:
                    output.flush()
                    return
            elif error.code() == KafkaError._PARTITION_EOF:
                at_end.add(message.partition() or 0)
            elif error.code() in _TRANSIENT and not error.fatal():
                status(args, f"warning: {describe_kafka_error(error)}; retrying.")
            else:
                raise CliError(_consume_error(args, message, error))
        output.flush()
        if args.exit and len(at_end) == partition_count:
            return


def _consume_error(args: argparse.Namespace, message: Message, error: KafkaError) -> str:
    partition = message.partition()
    where = args.topic if partition is None else f"{args.topic} partition {partition}"
    if error.code() == KafkaError._AUTO_OFFSET_RESET:
        return f"offset {args.offset} is out of range in {where}"
    return f"cannot consume {where}: {describe_kafka_error(error)}"
