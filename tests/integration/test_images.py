"""The project's images, built for real by images/build.sh and run by Docker.

The broker image runs as `docker run --read-only --user 1000` with a named volume for
its data, its ports published on loopback; confluent-kafka and Apache Kafka's console
tools produce and consume through it; a new container on the same volume serves the
same records. The operator, mirror and Spark images start their entrypoints, as uid 1000
on a read-only root filesystem.

Skipped only when no Docker Engine can run here. Every container and volume made here is
removed afterwards, even on failure (docker_containers.py); the built images are kept so
the next run reuses them.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Iterator

import pytest
from broker_process import free_port, http_get
from confluent_kafka import Consumer, Producer
from docker_containers import (
    Containers,
    DockerUnavailable,
    build_image,
    docker_ok,
    ensure_engine,
    inspect,
    is_running,
    logs,
    started_at,
    wait_for_log,
)
from kafka_tools import kafka_tool

# A cold build (base image, pip and apt downloads, pyspark's 300 MB) runs inside the first
# test of each image; a warm one takes seconds.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

READY_LIMIT_S = 2.0
START_TIMEOUT_S = 30.0
DATA_DIR = "/var/lib/odradek"


@pytest.fixture(scope="module")
def engine() -> None:
    try:
        ensure_engine()
    except DockerUnavailable as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def odradek_image(engine: None) -> str:
    return build_image("odradek")


@pytest.fixture(scope="module")
def spark_image(engine: None) -> str:
    return build_image("spark")


@pytest.fixture(scope="module")
def containers(engine: None) -> Iterator[Containers]:
    made = Containers()
    try:
        yield made
    finally:
        made.close()


class BrokerContainer:
    """One broker container as a user runs it: read-only root, uid 1000, a data volume,
    Kafka and HTTP ports published on 127.0.0.1 (the Kafka port advertised as such)."""

    def __init__(self, containers: Containers, image: str, volume: str) -> None:
        self.containers = containers
        self.image = image
        self.volume = volume
        self.port = free_port()
        self.http_port = free_port()
        self.name = ""

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> float:
        """Run a new container; seconds from its process's start until /readyz said 200."""
        self.name = self.containers.run(
            "--read-only",
            "--user", "1000",
            "--volume", f"{self.volume}:{DATA_DIR}",
            "--publish", f"127.0.0.1:{self.port}:9092",
            "--publish", f"127.0.0.1:{self.http_port}:9080",
            "--env", f"ODRADEK_ADVERTISED_LISTENERS=PLAINTEXT://{self.bootstrap}",
            self.image,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                status, _ = http_get(f"http://127.0.0.1:{self.http_port}/readyz", timeout=1.0)
            except OSError:  # docker-proxy accepts before the broker listens, then resets
                status = 0
            if status == 200:
                return time.time() - started_at(self.name)
            if not is_running(self.name):
                raise AssertionError(f"the broker container exited:\n{logs(self.name)}")
            time.sleep(0.01)
        raise AssertionError(f"not ready within {START_TIMEOUT_S}s:\n{logs(self.name)}")

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), then remove the container; the volume stays."""
        docker_ok("stop", "--time", "20", self.name)
        docker_ok("rm", self.name)


def produce(bootstrap: str, topic: str, values: list[str]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    failures: list[object] = []
    for value in values:
        producer.produce(topic, value.encode(), on_delivery=lambda e, _m: e and failures.append(e))
    assert producer.flush(30) == 0, "records still in flight after 30 s"
    assert not failures, failures


def consume_all(bootstrap: str, topic: str, count: int, timeout: float = 30.0) -> list[str]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"images-{time.monotonic_ns()}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    values: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value().decode())
    finally:
        consumer.close()
    return values


def test_broker_image_runs_as_uid_1000_writing_only_to_its_volume_and_restarts_within_2s(
    containers: Containers, odradek_image: str
) -> None:
    broker = BrokerContainer(containers, odradek_image, containers.volume())
    first_ready_s = broker.start()

    details = inspect(broker.name)
    assert details["HostConfig"]["ReadonlyRootfs"] is True  # type: ignore[index]
    assert docker_ok("exec", broker.name, "id", "-u").strip() == "1000"
    produce(broker.bootstrap, "readiness", ["one", "two"])
    # Nothing changed in the container's own filesystem: all writes went to the volume.
    assert docker_ok("diff", broker.name).strip() == ""
    assert docker_ok("exec", broker.name, "ls", f"{DATA_DIR}/data").split()

    # The limit holds once the image's files are in the page cache, as on a node that has
    # just pulled the image or restarts a pod. The first start here may read them from a
    # cold disk (an image built long before): 0.6-5.4 s measured on a cold machine.
    broker.stop()
    ready_s = broker.start()
    print(f"ready {first_ready_s:.2f}s after the first start, {ready_s:.2f}s after a restart")
    assert ready_s < READY_LIMIT_S, f"ready {ready_s:.2f}s after the container started"
    assert sorted(consume_all(broker.bootstrap, "readiness", 2)) == ["one", "two"]


def test_real_clients_produce_and_consume_and_a_new_container_on_the_volume_keeps_the_data(
    containers: Containers, odradek_image: str
) -> None:
    broker = BrokerContainer(containers, odradek_image, containers.volume())
    broker.start()
    server = ("--bootstrap-server", broker.bootstrap)
    kafka_tool("kafka-topics", *server, "--create", "--topic", "orders", "--partitions", "3")
    from_librdkafka = [f"order-{i}" for i in range(100)]
    from_console = [f"console-{i}" for i in range(5)]

    produce(broker.bootstrap, "orders", from_librdkafka)
    kafka_tool("kafka-console-producer", *server, "--topic", "orders",
               stdin="\n".join(from_console) + "\n")  # fmt: skip
    expected = sorted(from_librdkafka + from_console)
    consumed = kafka_tool("kafka-console-consumer", *server, "--topic", "orders",
                          "--from-beginning", "--max-messages", str(len(expected)))  # fmt: skip
    assert sorted(consumed.splitlines()) == expected
    assert sorted(consume_all(broker.bootstrap, "orders", len(expected))) == expected

    broker.stop()
    broker.start()  # a new container, same volume and ports

    assert sorted(consume_all(broker.bootstrap, "orders", len(expected))) == expected
    described = kafka_tool("kafka-topics", *server, "--describe", "--topic", "orders")
    assert "PartitionCount: 3" in described


def test_a_bad_config_exits_with_the_brokers_message_naming_the_key(
    containers: Containers, odradek_image: str
) -> None:
    done = containers.run_to_end(
        "--read-only", "--user", "1000", "--env", "ODRADEK_LOG_RETENTION_MS=soon", odradek_image
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert "invalid configuration: log.retention.ms: 'soon' is not a whole number" in done.stderr


def test_operator_entrypoint_imports_the_operator_and_runs_its_startup_handler(
    containers: Containers, odradek_image: str
) -> None:
    # The chart's command, with no cluster to reach: kopf imports the operator's handlers,
    # runs its startup activity, and that fails only for want of a Kubernetes API.
    operator = containers.run(
        "--read-only", "--user", "1000", "--entrypoint", "kopf", odradek_image,
        "run", "--standalone", "--all-namespaces", "--liveness=http://0.0.0.0:8080/healthz",
        "-m", "odradek.operator.main",
    )  # fmt: skip
    output = wait_for_log(operator, "Activity 'start' failed", timeout=60)

    assert "No configuration found" in output or "Service host/port is not set" in output
    assert "ModuleNotFoundError" not in output and "ImportError" not in output


def test_mirror_entrypoint_prints_its_help(containers: Containers, odradek_image: str) -> None:
    done = containers.run_to_end("--read-only", "--user", "1000", odradek_image, "mirror", "--help")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: odradek mirror")


# The Spark image under the broker's rules: uid 1000, a read-only root filesystem, and
# writable only what a pod mounts as emptyDirs (tmpfs here): /tmp and the working directory.
SPARK_RULES = (
    "--read-only", "--user", "1000",
    "--tmpfs", "/tmp", "--tmpfs", "/opt/spark/work-dir:uid=1000,gid=1000",
)  # fmt: skip


def test_spark_image_runs_spark_submit(containers: Containers, spark_image: str) -> None:
    done = containers.run_to_end(*SPARK_RULES, spark_image, "spark-submit", "--version")

    assert done.returncode == 0, done.stderr
    assert "version 4.2.0" in done.stdout + done.stderr


SPARK_JOB = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    from odradek.spark.data_source import register

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    register(spark)
    rows = (
        spark.read.format("odradek")
        .option("kafka.bootstrap.servers", sys.argv[1])
        .option("subscribe", sys.argv[2])
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("CAST(value AS STRING) AS value")
        .collect()
    )
    print("VALUES", ",".join(sorted(row.value for row in rows)))
    spark.stop()
    """
)


def test_spark_job_in_the_spark_image_reads_the_broker_container_with_format_odradek(
    containers: Containers, odradek_image: str, spark_image: str
) -> None:
    broker = BrokerContainer(containers, odradek_image, containers.volume())
    broker.start()
    values = [f"view-{i}" for i in range(20)]
    produce(broker.bootstrap, "page-views", values)

    # Host networking: the job reaches the broker at the address it advertises.
    done = containers.run_to_end(
        "--network", "host", *SPARK_RULES, spark_image,
        "python3", "-c", SPARK_JOB, broker.bootstrap, "page-views",
        timeout=600,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"VALUES {','.join(sorted(values))}" in done.stdout
