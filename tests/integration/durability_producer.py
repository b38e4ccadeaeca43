"""A load-generating producer process for test_durability.py.

Produces records ``<name>:<sequence>:<padding>`` round-robin over the
partitions of a topic (sequence ``s`` goes to partition ``s % partitions``)
until SIGTERM, then flushes and exits. Every delivery report is appended to
``--report`` as ``ACK <sequence> <partition> <offset>`` or
``NACK <sequence> <error>``; a fatal producer error is written as ``FATAL``
and makes the exit code 3. SIGUSR1 writes every thread's stack to the log.

Modes:
  idempotent  enable.idempotence=true (acks=all, retries forever, ordered)
  acks1       acks=1, no idempotence, one request in flight (ordered retries)
  acksall     acks=all, no idempotence, one request in flight
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
import time
from typing import Any

import confluent_kafka

MODES: dict[str, dict[str, Any]] = {
    "idempotent": {"enable.idempotence": True},
    "acks1": {"acks": 1, "enable.idempotence": False, "max.in.flight.requests.per.connection": 1},
    "acksall": {
        "acks": "all",
        "enable.idempotence": False,
        "max.in.flight.requests.per.connection": 1,
    },
}
PADDING = b"." * 80
DEBUG = "ODRADEK_PRODUCER_DEBUG" in os.environ  # librdkafka debug contexts, e.g. "eos"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", type=int, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--rate", type=float, default=2000.0, help="records per second")
    parser.add_argument(
        "--config", action="append", default=[], help="KEY=VALUE: a client setting (TLS, SASL)"
    )
    args = parser.parse_args()

    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # stacks on demand, even if stuck
    report = open(args.report, "a", buffering=1)  # noqa: SIM115 - line-buffered: a kill loses nothing
    fatal: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        sequence = int(msg.value().split(b":", 2)[1])
        if err is None:
            report.write(f"ACK {sequence} {msg.partition()} {msg.offset()}\n")
        else:
            report.write(f"NACK {sequence} {err.str()!r}\n")
            if err.fatal():
                fatal.append(err.str())

    def on_error(err: Any) -> None:
        if err.fatal():
            fatal.append(err.str())

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "linger.ms": 5,
            "message.timeout.ms": 60000,
            "retry.backoff.ms": 50,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 500,
            "error_cb": on_error,
            **MODES[args.mode],
            **dict(item.split("=", 1) for item in args.config),
            **({"debug": os.environ["ODRADEK_PRODUCER_DEBUG"]} if DEBUG else {}),
        }
    )
    interval = 1.0 / args.rate
    started = time.monotonic()
    sequence = 0
    while not stopping and not fatal:
        due = started + sequence * interval
        wait = due - time.monotonic()
        if wait > 0:
            producer.poll(min(wait, 0.05))  # never negative: librdkafka blocks forever then
            continue
        value = f"{args.name}:{sequence}:".encode() + PADDING
        try:
            producer.produce(
                args.topic,
                key=args.name.encode(),
                value=value,
                partition=sequence % args.partitions,
                on_delivery=on_delivery,
            )
        except BufferError:  # queue full while the broker is down
            producer.poll(0.05)
            continue
        sequence += 1
        producer.poll(0)
    remaining = producer.flush(60)
    report.write(f"END sent={sequence} undelivered={remaining}\n")
    for message in fatal:
        report.write(f"FATAL {message!r}\n")
    report.close()
    return 3 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
