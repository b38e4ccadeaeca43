"""Disk faults (issue 21): a full disk, I/O errors and corrupt segments, on real brokers
with real idempotent acks=all producers (durability_producer.py).

(a) A broker's only log directory, on an 8 MiB tmpfs, fills up: the directory goes
    offline with one ERROR line naming it and the cause, the broker halts (exit status 1)
    and the controller elects the other replicas when its session ends; once space is
    freed a restart serves again, every acknowledged record is stored exactly once, and the
    replicas agree byte for byte.
(b) Writes and fsyncs under a log directory fail with EIO (an LD_PRELOAD shim): that
    directory's partitions answer KAFKA_STORAGE_ERROR to Produce and Fetch, DescribeLogDirs
    reports it offline, the other directory keeps serving; when the second one fails too
    the broker halts; a restart with the disk repaired loses nothing acknowledged.
(c) A bit flipped in a follower's segment, and then in a former leader's after failover,
    while each is down: the restart cuts the log at the corrupt batch, says so in one
    WARNING, and fetches the rest again from the leader; nothing acknowledged is lost.
    A start with both directories failing, or with the first one (it holds the broker's
    own state) failing, exits with an error.
(d) In a cluster, one of a broker's two log directories fails: its replicas there leave
    their ISRs and lose their leaderships, Metadata lists them as offline replicas, the
    broker keeps serving the other directory; restarted with the directory still failing,
    it starts without it and its replicas there stay offline.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import WAIT_S, Cluster, ClusterFactory
from confluent_kafka.admin import AdminClient, NewTopic
from disk_faults import eio_shim, eio_trigger, fill, small_filesystem
from kafka.admin import KafkaAdminClient
from kafka_wire import WireClient, build_batch, load_request_schema, parse_batches
from replica_logs import BatchProducer, assert_replicas_identical, batch_producer, stored_batches
from test_cluster_failover import (
    PRODUCERS,
    TOPIC_CONFIGS,
    check_acked_without_offset,
    known_offsets,
    leaders_elsewhere,
    producer_processes,
    read_producer_report,
    stop_producer,
)
from test_durability import check_durability, count_acks, read_partitions

from odradek.cli.child_process import wait_until
from odradek.cli.etcd_process import EtcdProcess

KAFKA_STORAGE_ERROR = 56
DESCRIBE_LOG_DIRS = 35
HALTED = 1  # the broker's exit status once every log directory failed


def faster(argv: list[str]) -> list[str]:
    """Producers at 1500 records/s each: the small disk fills within seconds."""
    return [*argv, "--rate", "1500"]


def stop_all(processes: list[subprocess.Popen[bytes]]) -> list[int | None]:
    for process in processes:
        process.terminate()
    return [stop_producer(process) for process in processes]


def check_acknowledged_records(
    bootstrap: str, topic: str, partitions: int, workdir: Path, data_dir: Path
) -> None:
    """Every acknowledged record stored once, where its producer was told (test_durability)."""
    reports = [read_producer_report(workdir / f"{name}.report", name) for name in PRODUCERS]
    stored = read_partitions(bootstrap, topic, partitions)

    def batch_of(partition: int, offset: int) -> BatchProducer:
        return batch_producer(stored_batches(data_dir, topic, partition), offset)

    check_durability(stored, [known_offsets(report) for report in reports], batch_of)
    check_acked_without_offset(stored, reports)


def offline_lines(broker: Broker) -> list[str]:
    return [
        line
        for line in broker.log_path.read_text().splitlines()
        if " ERROR " in line and "is offline:" in line
    ]


def wait_for_acks(workdir: Path, count: int) -> None:
    wait_until(
        lambda: sum(count_acks(workdir / f"{name}.report") for name in PRODUCERS) >= count,
        WAIT_S,
        f"{count} records acknowledged",
    )


def test_a_full_disk_halts_the_broker_leaders_move_and_a_restart_loses_nothing(
    cluster_factory: ClusterFactory, tmp_path: Path
) -> None:
    disk = tmp_path / "disk"
    with small_filesystem(disk, 8 << 20):
        log_dir = disk / "data"
        cluster = cluster_factory(brokers=3, per_node={0: {"log.dirs": str(log_dir)}})
        full = cluster.brokers[0]
        full.data_dir = log_dir  # where replica_logs reads its replicas
        try:
            topic = cluster.create_topic(3, 3, TOPIC_CONFIGS, prefix="full")
            assert 0 in {cluster.leader_of(topic, p) for p in range(3)}
            filler = fill(disk, leave=512 << 10)
            with producer_processes(cluster.bootstrap, topic, tmp_path, launch=faster) as running:
                assert full.process is not None
                exit_code = full.process.wait(WAIT_S)
                cluster.wait_until(leaders_elsewhere(cluster, topic, 0), "leaders moved away")
                acked_while_down = sum(count_acks(tmp_path / f"{n}.report") for n in PRODUCERS)
                wait_for_acks(tmp_path, acked_while_down + 1000)
                filler.unlink()
                cluster.restart(0)
                cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicas in sync")
                exit_codes = stop_all(running)
            assert exit_code == HALTED
            assert exit_codes == [0] * len(PRODUCERS)
            [line] = offline_lines(full)
            assert str(log_dir) in line and "No space left on device" in line, line
            halt = f"shutting down broker 0 because all log dirs in {log_dir} have failed"
            assert halt in full.log_path.read_text()
            check_acknowledged_records(
                cluster.bootstrap, topic, 3, tmp_path, cluster.brokers[1].data_dir
            )
            cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicas in sync")
            assert_replicas_identical(cluster, topic, 3)
        finally:
            cluster.kill(0)  # before the unmount


def create_topic(bootstrap: str, partitions: int) -> str:
    name = unique_name("eio")
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=WAIT_S)
    with WireClient.to(bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=False)
    return name


def describe_log_dirs(bootstrap: str) -> dict[str, int]:
    """DescribeLogDirs v4: each log directory's error code."""
    with WireClient.to(bootstrap) as wire:
        request = load_request_schema(DESCRIBE_LOG_DIRS, 4)(topics=None)
        body = wire.call(DESCRIBE_LOG_DIRS, 4, request)
    return {result.log_dir: result.error_code.value for result in body.results}


def test_io_errors_take_a_log_dir_offline_and_the_broker_halts_when_none_is_left(
    broker_factory: BrokerFactory, tmp_path: Path
) -> None:
    broker = broker_factory(start=False)
    dirs = [broker.workdir / "dir-a", broker.workdir / "dir-b"]
    broker.data_dir = dirs[0]
    broker.settings["log.dirs"] = ",".join(map(str, dirs))
    broker.env.update(LD_PRELOAD=str(eio_shim()), EIO_SHIM_DIRS=":".join(map(str, dirs)))
    broker.start()
    topic = create_topic(broker.bootstrap, 2)
    home = {p: next(d for d in dirs if (d / f"{topic}-{p}").is_dir()) for p in range(2)}
    assert set(home.values()) == set(dirs), home  # one partition in each directory
    failed, other = (0, 1) if home[0] == dirs[0] else (1, 0)
    probe = build_batch([b"probe:0:"])
    with producer_processes(broker.bootstrap, topic, tmp_path, partitions=2) as running:
        wait_for_acks(tmp_path, 300)
        eio_trigger(home[failed]).touch()
        with WireClient.to(broker.bootstrap) as wire:
            wait_until(
                lambda: wire.produce(topic, failed, probe).error_code.value == KAFKA_STORAGE_ERROR,
                WAIT_S,
                "Produce refused with KAFKA_STORAGE_ERROR",
            )
            assert wire.fetch(topic, failed, 0).error_code.value == KAFKA_STORAGE_ERROR
            served = wire.fetch(topic, other, 0)
            assert served.error_code.value == 0 and served.records
        assert describe_log_dirs(broker.bootstrap) == {
            str(home[failed]): KAFKA_STORAGE_ERROR,
            str(home[other]): 0,
        }
        acked = sum(count_acks(tmp_path / f"{name}.report") for name in PRODUCERS)
        wait_for_acks(tmp_path, acked + 300)  # the other directory's partition goes on
        eio_trigger(home[other]).touch()
        assert broker.process is not None
        assert broker.process.wait(WAIT_S) == HALTED
        assert start_refused(broker) == HALTED  # no log directory is online
        eio_trigger(home[other]).unlink()
        eio_trigger(home[failed]).unlink()
        eio_trigger(dirs[0]).touch()
        assert start_refused(broker) == HALTED  # the one holding the broker's state is offline
        eio_trigger(dirs[0]).unlink()
        broker.start()
        acked = sum(count_acks(tmp_path / f"{name}.report") for name in PRODUCERS)
        wait_for_acks(tmp_path, acked + 300)
        exit_codes = stop_all(running)
    assert exit_codes == [0] * len(PRODUCERS)
    lines = offline_lines(broker)
    # one per directory, not one per request; then the two failed starts'
    assert len(lines) == 5, lines
    for line, log_dir in zip(lines, [home[failed], home[other], *dirs, dirs[0]], strict=True):
        assert f"log directory {log_dir} is offline" in line and "Input/output error" in line
    log_text = broker.log_path.read_text()
    assert log_text.count("because all log dirs in") == 2
    assert f"cannot start: {dirs[0]}, which holds the broker's own state, is offline" in log_text
    for partition in range(2):
        check_acknowledged_records(broker.bootstrap, topic, 2, tmp_path, home[partition])


def start_refused(broker: Broker) -> int:
    """The exit status of a start that must fail."""
    broker.start(wait=False)
    assert broker.process is not None
    return broker.process.wait(WAIT_S)


def offline_replicas(bootstrap: str, topic: str) -> dict[int, list[int]]:
    """Each partition's offline replicas, as kafka-python's admin client reads Metadata."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        [described] = admin.describe_topics([topic])
    finally:
        admin.close()
    return {p["partition_index"]: sorted(p["offline_replicas"]) for p in described["partitions"]}


def flip_a_bit(replica_dir: Path) -> tuple[int, int]:
    """Flip a bit inside the middle batch of the replica's only segment; (the batch's base
    offset, the bytes from it to the end of the segment)."""
    [segment] = replica_dir.glob("*.log")
    data = bytearray(segment.read_bytes())
    batches, _ = parse_batches(bytes(data))
    victim = batches[len(batches) // 2]
    data[victim.position + victim.size - 3] ^= 0x10  # in a record: the CRC no longer matches
    segment.write_bytes(bytes(data))
    return victim.base_offset, len(data) - victim.position


def restart_with_a_flipped_bit(cluster: Cluster, topic: str, node_id: int) -> None:
    """Restart the killed broker ``node_id`` with a corrupt batch in its replica, and check
    that it cut its log there, said so, and caught up again."""
    offset, dropped = flip_a_bit(cluster.brokers[node_id].data_dir / f"{topic}-0")
    cluster.restart(node_id)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicas in sync")
    warning = (
        f"WARNING broker={node_id} odradek.broker.log.partition_log: {topic}-0: truncated at "
        f"offset {offset} after a torn or corrupt batch, dropping {dropped} bytes"
    )
    assert warning in cluster.brokers[node_id].log_path.read_text()


def test_a_corrupt_batch_found_at_start_is_cut_logged_and_fetched_again(
    cluster_factory: ClusterFactory, tmp_path: Path
) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(1, 3, TOPIC_CONFIGS, prefix="bitflip")
    with producer_processes(cluster.bootstrap, topic, tmp_path, partitions=1) as running:
        wait_for_acks(tmp_path, 500)
        leader = cluster.leader_of(topic, 0)
        follower = (leader + 1) % 3
        cluster.kill(follower)
        restart_with_a_flipped_bit(cluster, topic, follower)
        cluster.kill(leader)
        cluster.wait_until(leaders_elsewhere(cluster, topic, leader), "a new leader")
        restart_with_a_flipped_bit(cluster, topic, leader)
        acked = sum(count_acks(tmp_path / f"{name}.report") for name in PRODUCERS)
        wait_for_acks(tmp_path, acked + 200)
        exit_codes = stop_all(running)
    assert exit_codes == [0] * len(PRODUCERS)
    check_acknowledged_records(cluster.bootstrap, topic, 1, tmp_path, cluster.brokers[0].data_dir)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "replicas in sync")
    assert_replicas_identical(cluster, topic, 1)


def test_a_failed_log_dir_in_a_cluster_hands_its_replicas_to_the_other_brokers(
    etcd: EtcdProcess, tmp_path: Path
) -> None:
    """(d) Broker 0 has two log dirs and the second fails (EIO) while it keeps running: the
    controller takes the failed dir's replicas out of their ISRs and elects other leaders
    where broker 0 led, while broker 0 keeps its place for the other dir's partitions, and
    Metadata lists broker 0 as an offline replica of the failed dir's partitions. Restarted
    with the dir still failing, it starts without it (one more ERROR line, DescribeLogDirs
    answers KAFKA_STORAGE_ERROR for it) and those replicas stay offline; restarted with the
    disk repaired, it rejoins every ISR and nothing acknowledged is lost."""
    partitions = 4
    cluster = Cluster(tmp_path / "cluster", etcd, 3, settings={"cluster.name": unique_name("dir")})
    victim = cluster.brokers[0]
    dirs = [victim.workdir / "dir-a", victim.workdir / "dir-b"]
    victim.settings["log.dirs"] = ",".join(map(str, dirs))
    victim.env.update(LD_PRELOAD=str(eio_shim()), EIO_SHIM_DIRS=":".join(map(str, dirs)))
    try:
        cluster.start()
        topic = cluster.create_topic(partitions, 3, TOPIC_CONFIGS, prefix="dirfail")
        cluster.wait_until(
            lambda: all(any((d / f"{topic}-{p}").is_dir() for d in dirs) for p in range(4)),
            "broker 0's replicas created",
        )
        home = {p: next(d for d in dirs if (d / f"{topic}-{p}").is_dir()) for p in range(4)}
        assert set(home.values()) == set(dirs), home
        lost = {p for p in range(partitions) if home[p] == dirs[1]}
        kept = set(range(partitions)) - lost
        offline_while_failed = {p: [0] if p in lost else [] for p in range(partitions)}

        def handed_over() -> bool:
            states = {p.partition: p for p in cluster.state(via=1).partitions if p.topic == topic}
            return all(states[p].leader != 0 and 0 not in states[p].isr for p in lost) and all(
                0 in states[p].isr for p in kept
            )

        with producer_processes(cluster.bootstrap, topic, tmp_path, partitions=4) as running:
            wait_for_acks(tmp_path, 300)
            eio_trigger(dirs[1]).touch()
            cluster.wait_until(handed_over, "the failed dir's replicas handed to other brokers")
            cluster.wait_until(
                lambda: offline_replicas(cluster.bootstrap, topic) == offline_while_failed,
                "broker 0 listed as an offline replica of the failed dir's partitions",
            )
            acked = sum(count_acks(tmp_path / f"{name}.report") for name in PRODUCERS)
            wait_for_acks(tmp_path, acked + 500)
            assert victim.is_running(), "one dir failed: the broker goes on with the other"
            cluster.kill(0)
            cluster.restart(0)  # the dir still failing
            assert describe_log_dirs(victim.bootstrap) == {
                str(dirs[0]): 0,
                str(dirs[1]): KAFKA_STORAGE_ERROR,
            }
            cluster.wait_until(handed_over, "broker 0 back in the ISRs of the online dir")
            cluster.wait_until(
                lambda: offline_replicas(cluster.bootstrap, topic) == offline_while_failed,
                "broker 0 still an offline replica of the failed dir's partitions",
            )
            cluster.kill(0)
            eio_trigger(dirs[1]).unlink()
            cluster.restart(0)
            cluster.wait_until(lambda: cluster.fully_replicated(topic), "broker 0 back in sync")
            exit_codes = stop_all(running)
        assert exit_codes == [0] * len(PRODUCERS)
        assert offline_replicas(cluster.bootstrap, topic) == {p: [] for p in range(partitions)}
        [at_run_time, at_start] = offline_lines(victim)
        assert f"log directory {dirs[1]} is offline" in at_run_time
        assert f"log directory {dirs[1]} is offline" in at_start
        assert "Input/output error" in at_start
        check_acknowledged_records(
            cluster.bootstrap, topic, partitions, tmp_path, cluster.brokers[1].data_dir
        )
        # replica_logs reads each broker's replicas under its data_dir: link broker 0's there.
        victim.data_dir = victim.workdir / "replicas"
        victim.data_dir.mkdir()
        for partition, log_dir in home.items():
            (victim.data_dir / f"{topic}-{partition}").symlink_to(log_dir / f"{topic}-{partition}")
        assert_replicas_identical(cluster, topic, partitions)
    finally:
        cluster.close()
