"""Apache Kafka's own command-line tools, run against Odradek: the classes behind
kafka-topics, kafka-configs, kafka-get-offsets, ... from the jars bench/kafka_dist.py
fetches with mvn (scripts/setup.sh fetches them before the tests run)."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import shutil
import subprocess
import sys
import tempfile
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
    archive = ("-XX:SharedArchiveFile=" + str(tools_archive()),)
    return [*java_command(*archive, *java_options), TOOLS[name], *arguments]


def java_command(*java_options: str) -> list[str]:
    """``java`` with the tools' JVM options and classpath, up to the main class."""
    return [
        "java",
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",  # short-lived: C1 alone starts faster
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
        *java_options,
        "-cp",
        f"{kafka_libs()}/*",
    ]


@functools.cache
def tools_archive() -> Path:
    """A class-data-sharing archive of the classes Kafka's tools load: with it a tool's JVM
    starts in about half the time (0.4 s, not 0.9 s, for kafka-topics --list), which the
    suite's 300 tool runs feel. Made once per Java and Kafka version, cached beside the
    jars, from the classes a round of tools loads against a real broker."""
    java = subprocess.run(["java", "-version"], capture_output=True, text=True, check=True)
    jars = sorted(path.name for path in kafka_libs().iterdir())
    key = hashlib.sha256(repr((java.stderr, jars, java_command())).encode()).hexdigest()[:12]
    archive = kafka_libs().parent / f"tools-{key}.jsa"
    with open(archive.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not archive.exists():
            with tempfile.TemporaryDirectory(prefix="kafka-tools-archive-") as workdir:
                print(f"kafka_tools: making {archive} (about 20 s, once)", file=sys.stderr)
                dump_archive(Path(workdir), archive)
    return archive


def dump_archive(workdir: Path, archive: Path) -> None:
    """Run a round of tools against a broker, listing the classes each loads; dump those."""
    from broker_process import Broker

    lists: list[Path] = []
    with Broker(workdir / "broker").start() as broker:
        server = ("--bootstrap-server", broker.bootstrap)
        topic = ("--topic", "archive")
        for index, (name, arguments, stdin) in enumerate(
            [
                ("kafka-topics", (*server, "--create", *topic, "--partitions", "2"), None),
                ("kafka-topics", (*server, "--describe", *topic), None),
                ("kafka-configs", (*server, "--describe", "--entity-type", "topics"), None),
                ("kafka-console-producer", (*server, *topic), "one\ntwo\n"),
                ("kafka-console-consumer", (*server, *topic, "--from-beginning",
                                            "--max-messages", "2", "--group", "g"), None),
                ("kafka-consumer-groups", (*server, "--describe", "--group", "g"), None),
                ("kafka-get-offsets", (*server, *topic), None),
                ("kafka-transactions", (*server, "list"), None),
            ]
        ):  # fmt: skip
            lists.append(workdir / f"{index}.classlist")
            listing = java_command(f"-XX:DumpLoadedClassList={lists[-1]}")
            subprocess.run(
                [*listing, TOOLS[name], *arguments],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=True,
            )
    merged = workdir / "tools.classlist"
    merged.write_text("".join(dict.fromkeys(line for path in lists for line in path.open())))
    partial = workdir / "tools.jsa"
    dump = java_command("-Xshare:dump", f"-XX:SharedClassListFile={merged}",
                        f"-XX:SharedArchiveFile={partial}")  # fmt: skip
    subprocess.run(dump, capture_output=True, timeout=TIMEOUT_S, check=True)
    shutil.move(partial, archive)
