"""Apache Kafka's own command-line tools, run against Odradek: the classes behind
kafka-topics, kafka-configs, kafka-get-offsets, ... from the jars bench/kafka_dist.py
fetches with mvn (scripts/setup.sh fetches them before the tests run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from kafka_dist import kafka_libs

TOOLS = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-broker-api-versions": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-verifiable-share-consumer": "org.apache.kafka.tools.VerifiableShareConsumer",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "client-compatibility-test": "org.apache.kafka.tools.ClientCompatibilityTest",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-dump-log": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    # the Java client's consume-transform-produce loop that Kafka's own transaction system
    # tests run (read_committed consumer, transactional producer, offsets in the transaction)
    "transactional-message-copier": "org.apache.kafka.tools.TransactionalMessageCopier",
}
TIMEOUT_S = 120
LOG4J_CONFIG = Path(__file__).with_name("kafka_tools_log4j2.properties")


def kafka_tool(
    name: str, *arguments: str, stdin: str | None = None, java_options: tuple[str, ...] = ()
) -> str:
    """Run one tool to completion; its standard output. A failing tool fails the test with
    what it printed."""
    done = run_kafka_tool(name, *arguments, stdin=stdin, java_options=java_options)
    if done.returncode != 0:
        raise AssertionError(
            f"{name} {' '.join(arguments)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def run_kafka_tool(
    name: str, *arguments: str, stdin: str | None = None, java_options: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """Run one tool to completion, whatever its exit status; ``java_options`` go to the JVM
    (system properties, e.g.)."""
    return subprocess.run(
        kafka_tool_command(name, *arguments, java_options=java_options),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def kafka_tool_command(name: str, *arguments: str, java_options: tuple[str, ...] = ()) -> list[str]:
    """The command line that runs one tool (for a test that runs it alongside other work)."""
    return [
        "java",
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",  # short-lived: C1 alone starts faster
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
        *java_options,
        "-cp",
        f"{kafka_libs()}/*",
        TOOLS[name],
        *arguments,
    ]
