"""A group consumer in its own process, for tests that SIGKILL members.

``python group_consumer.py CLIENT BOOTSTRAP TOPIC GROUP CLIENT_ID [--max-records N]
[--instance-id ID]``
subscribes with kafka-python, aiokafka or confluent-kafka (classic protocol), or with
librdkafka or the Java client (Kafka's VerifiableConsumer) on the KIP-848 consumer
protocol (``group.protocol=consumer``), commits after processing each batch (exactly
the offsets after its records), and reports on stdout, one JSON object a line:

- ``{"event": "assigned", "member_id": ..., "partitions": [...]}`` whenever its
  member id or assignment changes (an idle member reports ``[]``);
- ``{"event": "records", "records": [[partition, offset, value], ...]}`` per batch;
- ``{"event": "committed", "offsets": [[partition, next_offset], ...]}`` after a commit.

After ``--max-records`` it keeps its membership but processes and commits
nothing more. SIGTERM closes it cleanly (it leaves the group).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 500
POLL_TIMEOUT_MS = 200
# the KIP-848 consumer protocol (group.protocol=consumer) with librdkafka and the Java client
CONSUMER_PROTOCOL_LIBRDKAFKA = "librdkafka-consumer-protocol"
CONSUMER_PROTOCOL_JAVA = "java-consumer-protocol"

Batch = list[tuple[int, int, str]]


class Reporter:
    """Writes events and remembers what was last reported."""

    def __init__(self, max_records: int | None) -> None:
        self._last: tuple[str, list[int]] | None = None
        self.remaining = max_records if max_records is not None else sys.maxsize
        self.stopping = False

    def emit(self, event: str, **fields: Any) -> None:
        print(json.dumps({"event": event, **fields}), flush=True)

    def membership(self, member_id: str, partitions: list[int]) -> None:
        current = (member_id, sorted(partitions))
        if member_id and current != self._last:
            self._last = current
            self.emit("assigned", member_id=member_id, partitions=current[1])

    def take(self, batch: Batch) -> bool:
        """Report a batch; False once past ``--max-records`` (then nothing is committed)."""
        if not batch or self.remaining <= 0:
            return False
        self.remaining -= len(batch)
        self.emit("records", records=batch)
        return True

    def committed(self, offsets: dict[int, int]) -> None:
        self.emit("committed", offsets=sorted(offsets.items()))


def _next_offsets(batch: Batch) -> dict[int, int]:
    offsets: dict[int, int] = {}
    for partition, offset, _ in batch:
        offsets[partition] = max(offsets.get(partition, 0), offset + 1)
    return offsets


def _python_client_config(args: argparse.Namespace) -> dict[str, Any]:
    """The consumer settings kafka-python and aiokafka spell the same way."""
    return {
        "bootstrap_servers": args.bootstrap,
        "group_id": args.group,
        "client_id": args.client_id,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": HEARTBEAT_INTERVAL_MS,
    }


def _python_client_batch(polled: dict[Any, list[Any]]) -> Batch:
    """(partition, offset, value) of what kafka-python's or aiokafka's poll returned."""
    return [
        (tp.partition, record.offset, record.value.decode())
        for tp, records in polled.items()
        for record in records
    ]


def run_kafka_python(args: argparse.Namespace, report: Reporter) -> None:
    import kafka
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata, TopicPartition

    consumer = kafka.KafkaConsumer(args.topic, **_python_client_config(args))
    while not report.stopping:
        polled = consumer.poll(timeout_ms=POLL_TIMEOUT_MS)
        generation = consumer._coordinator._generation
        member_id = generation.member_id if generation else ""
        report.membership(member_id, [tp.partition for tp in consumer.assignment()])
        batch = _python_client_batch(polled)
        if report.take(batch):
            offsets = _next_offsets(batch)
            try:
                consumer.commit(
                    {
                        TopicPartition(args.topic, partition): OffsetAndMetadata(offset, "", -1)
                        for partition, offset in offsets.items()
                    }
                )
            except KafkaError:
                continue  # a rebalance took the partitions: their new owner reads them again
            report.committed(offsets)
    consumer.close()


def run_aiokafka(args: argparse.Namespace, report: Reporter) -> None:
    import aiokafka
    from aiokafka.errors import KafkaError

    async def main() -> None:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, _stop, report)
        consumer = aiokafka.AIOKafkaConsumer(args.topic, **_python_client_config(args))
        await consumer.start()
        while not report.stopping:
            polled = await consumer.getmany(timeout_ms=POLL_TIMEOUT_MS)
            member_id = consumer._coordinator.member_id
            report.membership(member_id, [tp.partition for tp in consumer.assignment()])
            batch = _python_client_batch(polled)
            if report.take(batch):
                offsets = _next_offsets(batch)
                try:
                    await consumer.commit(
                        {aiokafka.TopicPartition(args.topic, p): o for p, o in offsets.items()}
                    )
                except KafkaError:
                    continue
                report.committed(offsets)
        await consumer.stop()

    asyncio.run(main())


def run_confluent(args: argparse.Namespace, report: Reporter) -> None:
    import confluent_kafka

    # the classic protocol's session and heartbeat are the member's; the consumer
    # protocol's are the broker's (group.consumer.*)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "client.id": args.client_id,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **({"debug": args.debug} if args.debug else {}),
            **(
                {"group.protocol": "consumer"}
                if args.client == CONSUMER_PROTOCOL_LIBRDKAFKA
                else {
                    "session.timeout.ms": SESSION_TIMEOUT_MS,
                    "heartbeat.interval.ms": HEARTBEAT_INTERVAL_MS,
                }
            ),
            **({"group.instance.id": args.instance_id} if args.instance_id else {}),
        }
    )
    consumer.subscribe([args.topic])
    while not report.stopping:
        messages = consumer.consume(500, timeout=POLL_TIMEOUT_MS / 1000)
        report.membership(consumer.memberid() or "", [tp.partition for tp in consumer.assignment()])
        batch = [
            (message.partition() or 0, message.offset() or 0, (message.value() or b"").decode())
            for message in messages
            if message.error() is None
        ]
        if report.take(batch):
            offsets = _next_offsets(batch)
            try:
                consumer.commit(
                    offsets=[
                        confluent_kafka.TopicPartition(args.topic, p, o) for p, o in offsets.items()
                    ],
                    asynchronous=False,
                )
            except confluent_kafka.KafkaException:
                continue
            report.committed(offsets)
    consumer.close()


def run_java(args: argparse.Namespace, report: Reporter) -> None:
    """Kafka's VerifiableConsumer (the Java client, ``--group-protocol consumer``): it
    commits synchronously after each batch; its events are translated to ours."""
    sys.path.insert(0, str(Path(__file__).parent))
    from kafka_tools import kafka_tool_command

    with tempfile.NamedTemporaryFile("w", suffix=".properties", delete=False) as config:
        config.write(f"client.id={args.client_id}\n")
        if args.instance_id:
            config.write(f"group.instance.id={args.instance_id}\n")
    command = kafka_tool_command(
        "kafka-verifiable-consumer",
        *("--bootstrap-server", args.bootstrap, "--topic", args.topic, "--group-id", args.group),
        *("--group-protocol", "consumer", "--reset-policy", "earliest", "--verbose"),
        *("--consumer.config", config.name),
    )
    java = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    signal.signal(signal.SIGTERM, lambda *_: (_stop(report), java.terminate()))
    owned: set[int] = set()
    batch: Batch = []
    member_id = f"java:{args.client_id}"  # the Java tool does not print its member id
    assert java.stdout is not None
    for line in java.stdout:
        if not line.startswith("{"):
            continue  # the tool's other output
        event = json.loads(line)
        name = event["name"]
        if name in ("partitions_assigned", "partitions_revoked"):
            changed = {item["partition"] for item in event["partitions"]}
            owned = owned | changed if name == "partitions_assigned" else owned - changed
            report.membership(member_id, sorted(owned))
        elif name == "record_data":
            batch.append((event["partition"], event["offset"], event["value"] or ""))
        elif name == "records_consumed":
            report.take(batch)
            batch = []
        elif name == "offsets_committed" and event.get("success"):
            report.committed({item["partition"]: item["offset"] for item in event["offsets"]})
    java.wait()
    os.unlink(config.name)


def _stop(report: Reporter, *_: object) -> None:
    report.stopping = True


RUNNERS: dict[str, Callable[[argparse.Namespace, Reporter], None]] = {
    "kafka-python": run_kafka_python,
    "aiokafka": run_aiokafka,
    "confluent-kafka": run_confluent,
    CONSUMER_PROTOCOL_LIBRDKAFKA: run_confluent,
    CONSUMER_PROTOCOL_JAVA: run_java,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("client", choices=sorted(RUNNERS))
    parser.add_argument("bootstrap")
    parser.add_argument("topic")
    parser.add_argument("group")
    parser.add_argument("client_id")
    parser.add_argument("--max-records", type=int)
    parser.add_argument("--instance-id", help="group.instance.id (confluent-kafka only)")
    parser.add_argument("--debug", help="librdkafka's debug contexts, to the member's log")
    args = parser.parse_args()
    if args.instance_id and args.client in ("kafka-python", "aiokafka"):
        parser.error("--instance-id is wired for confluent-kafka and Java only")
    if args.debug and RUNNERS[args.client] is not run_confluent:
        parser.error("--debug sets librdkafka's debug: confluent-kafka only")
    report = Reporter(args.max_records)
    signal.signal(signal.SIGTERM, lambda *_: _stop(report))
    started = time.monotonic()
    RUNNERS[args.client](args, report)
    report.emit("closed", seconds=round(time.monotonic() - started, 3))


if __name__ == "__main__":
    main()
