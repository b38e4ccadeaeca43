"""A share group consumer in its own process, for tests that SIGKILL members.

``python share_consumer.py CLIENT BOOTSTRAP TOPIC GROUP CLIENT_ID [--reject PREFIX]
[--release PREFIX] [--hold]`` consumes with librdkafka's ShareConsumer (confluent-kafka,
explicit acknowledgement) or the Java KafkaShareConsumer (Kafka's VerifiableShareConsumer,
acknowledging each poll synchronously) and reports on stdout, one JSON object a line:
``{"event": "records", "records": [[partition, offset, value, delivery_count], ...]}``
per poll (the Java tool does not print delivery counts: -1). librdkafka accepts each
record, except that it rejects values starting with ``--reject``, releases those
starting with ``--release``, and with ``--hold`` acknowledges nothing and stops polling
after its first records (so they stay acquired until it is killed or its locks expire).
SIGTERM closes it cleanly (it leaves the group and its share sessions).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LIBRDKAFKA = "librdkafka"
JAVA = "java"


def emit(records: list[tuple[int, int, str, int]]) -> None:
    print(json.dumps({"event": "records", "records": records}), flush=True)


def run_librdkafka(args: argparse.Namespace, stopping: list[bool]) -> None:
    import confluent_kafka
    from confluent_kafka import AcknowledgeType

    consumer = confluent_kafka.ShareConsumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "client.id": args.client_id,
            "share.acknowledgement.mode": "explicit",
        }
    )
    consumer.subscribe([args.topic])
    print(json.dumps({"event": "subscribed"}), flush=True)
    while not stopping[0]:
        polled = [m for m in consumer.poll(0.2) if m.error() is None]
        if not polled:
            continue
        emit([(m.partition(), m.offset(), m.value().decode(), m.delivery_count()) for m in polled])
        if args.hold:
            while not stopping[0]:
                time.sleep(0.1)
            break
        for message in polled:
            value = message.value().decode()
            kind = AcknowledgeType.ACCEPT
            if args.reject and value.startswith(args.reject):
                kind = AcknowledgeType.REJECT
            elif args.release and value.startswith(args.release):
                kind = AcknowledgeType.RELEASE
            consumer.acknowledge(message, kind)
        consumer.commit_sync()
    consumer.close()


def run_java(args: argparse.Namespace, stopping: list[bool]) -> None:
    """Kafka's VerifiableShareConsumer: it acknowledges each poll synchronously."""
    sys.path.insert(0, str(Path(__file__).parent))
    from kafka_tools import kafka_tool_command

    with tempfile.NamedTemporaryFile("w", suffix=".properties", delete=False) as config:
        config.write(f"client.id={args.client_id}\n")
    command = kafka_tool_command(
        "kafka-verifiable-share-consumer",
        *("--bootstrap-server", args.bootstrap, "--topic", args.topic, "--group-id", args.group),
        *("--acknowledgement-mode", "sync", "--verbose", "--command-config", config.name),
    )
    java = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    signal.signal(signal.SIGTERM, lambda *_: java.terminate())
    batch: list[tuple[int, int, str, int]] = []
    assert java.stdout is not None
    for line in java.stdout:
        if not line.startswith("{"):
            continue  # the tool's other output
        event = json.loads(line)
        name = event["name"]
        if name == "startup_complete":
            print(json.dumps({"event": "subscribed"}), flush=True)
        elif name == "record_data":
            batch.append((event["partition"], event["offset"], event["value"] or "", -1))
        elif name == "records_consumed":
            emit(batch)
            batch = []
    java.wait()
    Path(config.name).unlink()


RUNNERS: dict[str, Callable[[argparse.Namespace, list[bool]], None]] = {
    LIBRDKAFKA: run_librdkafka,
    JAVA: run_java,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=sorted(RUNNERS))
    for name in ("bootstrap", "topic", "group", "client_id"):
        parser.add_argument(name)
    parser.add_argument("--reject")
    parser.add_argument("--release")
    parser.add_argument("--hold", action="store_true")
    args = parser.parse_args()
    stopping = [False]

    def stop(*_: Any) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    RUNNERS[args.client](args, stopping)


if __name__ == "__main__":
    main()
