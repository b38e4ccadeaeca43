"""Odradek against Apache Kafka on this machine: the same workloads, clients and settings.

For each round and workload, starts each system in turn (the order alternates
between rounds) on free loopback ports pinned to one CPU, runs confluent-kafka
producer and consumer processes pinned to the others, stops the system, and
records records/s, MB/s, latency, broker CPU s/GB, peak RSS and time to ready.
Writes JSON, a Markdown table into docs/benchmarks.md and a PNG chart. See
bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from compare_chart import write_chart
from compare_report import Sample, markdown_table, read_json, update_markdown, write_json
from go_clients import go_consume, go_produce, write_pool
from java_clients import client_config, java_consume, java_produce, write_payloads
from kafka_dist import KAFKA_VERSION
from load_workers import (
    BenchError,
    ConsumerJob,
    PhaseResult,
    ProducerJob,
    consume,
    produce,
    produce_paced,
    produce_transactional,
    run_phase,
)
from proc_stats import cpu_split, peak_rss_bytes, pinned
from running_system import RunningSystem, create_topic
from secured_listener import PROTOCOLS, listener_security, negotiated_tls
from systems import STARTERS
from workloads import MIB, WORKLOADS, Workload, quick

ROOT = Path(__file__).resolve().parent.parent
TOPIC = "bench"
WARM_UP_TOPIC = "warm-up"
WARM_UP_BYTES = 64 * MIB
LATENCY_LOAD = 0.5
GO_KINDS = ("throughput", "catch-up")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.report_only:
        _write_reports(args, *read_json(args.report_only))
        return 0
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    workloads = _selected(args)
    context: dict[str, object] = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "quick": args.quick,
        "rounds": args.rounds,
        "security": args.security,
        "clients": args.clients,
        "kafka": KAFKA_VERSION,
        "commit": _git_commit(),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
        "broker_cpus": sorted(broker_cpus),
        "load_cpus": sorted(load_cpus),
        "load_before": os.getloadavg(),
    }
    samples: list[Sample] = []
    tls: dict[str, str] = {}
    context["tls"] = tls
    try:
        for round_number in range(args.rounds):
            order = args.systems if round_number % 2 == 0 else args.systems[::-1]
            rates: dict[tuple[str, str], float] = {}
            for workload in workloads:
                for system in order:
                    _log(f"round {round_number + 1}/{args.rounds}: {workload.name} on {system}")
                    samples += _run(system, workload, round_number, rates, broker_cpus, args, tls)
    except BenchError as error:
        print(f"bench: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130
    context["load_after"] = os.getloadavg()
    write_json(args.output, samples, context)
    _log(f"results in {args.output}")
    _write_reports(args, samples, context)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, one round")
    parser.add_argument("--rounds", type=int, help="repeats of everything (default 3, quick 1)")
    parser.add_argument(
        "--workloads",
        help="comma-separated subset of: " + ",".join(w.name for w in WORKLOADS).replace("%", "%%"),
    )
    parser.add_argument(
        "--backlog-mb", type=int, help="catch-up backlog in MiB (default 2048, quick 128)"
    )
    parser.add_argument(
        "--systems", default="odradek,kafka", type=lambda text: tuple(text.split(","))
    )
    parser.add_argument(
        "--security",
        default="PLAINTEXT",
        type=str.upper,
        choices=PROTOCOLS,
        help="the clients' listener on both systems (default PLAINTEXT); each has its own table",
    )
    parser.add_argument(
        "--clients",
        default="python",
        choices=("python", "go"),
        help="load generator of the throughput and catch-up workloads: confluent-kafka "
        "(default) or bench/loadgen (franz-go, PLAINTEXT only); go has its own table",
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    parser.add_argument(
        "--output", type=Path, default=ROOT / "bench" / "results" / f"compare-{stamp}.json"
    )
    parser.add_argument("--docs", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument(
        "--chart",
        type=Path,
        help="default docs/benchmarks.png, benchmarks-<security>.png or benchmarks-go-clients.png",
    )
    parser.add_argument(
        "--report-only", type=Path, metavar="JSON", help="rewrite table and chart from a JSON file"
    )
    return parser


def _selected(args: argparse.Namespace) -> list[Workload]:
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    names = args.workloads.split(",") if args.workloads else [w.name for w in WORKLOADS]
    unknown = set(names) - {w.name for w in WORKLOADS}
    if unknown:
        raise SystemExit(f"unknown workloads: {', '.join(sorted(unknown))}")
    if args.clients == "go":
        names = _go_workloads(args, names)
    clustered = [w.name for w in WORKLOADS if w.name in names and w.nodes > 1]
    if args.security != "PLAINTEXT" and clustered:
        # odradek cluster's LocalCluster gives each broker one PLAINTEXT listener.
        raise SystemExit(f"--security {args.security} runs one node only, not: {clustered}")
    backlog = (args.backlog_mb or (128 if args.quick else 2048)) * MIB
    chosen = []
    for workload in WORKLOADS:
        if workload.name not in names:
            continue
        if workload.kind == "catch-up":
            workload = replace(workload, size=backlog)
        chosen.append(quick(workload, backlog) if args.quick else workload)
    return chosen


def _go_workloads(args: argparse.Namespace, names: list[str]) -> list[str]:
    """The workloads the Go load generator runs: throughput and catch-up, over PLAINTEXT."""
    if args.security != "PLAINTEXT":
        raise SystemExit("--clients go connects over PLAINTEXT only")
    kinds = {w.name: w.kind for w in WORKLOADS}
    others = [name for name in names if kinds[name] not in GO_KINDS]
    if args.workloads and others:
        raise SystemExit(f"--clients go runs throughput and catch-up workloads, not: {others}")
    return [name for name in names if kinds[name] in GO_KINDS]


def _run(
    system: str,
    workload: Workload,
    round_number: int,
    rates: dict[tuple[str, str], float],
    broker_cpus: set[int],
    args: argparse.Namespace,
    tls: dict[str, str],
) -> list[Sample]:
    """Start ``system`` with its clients' listener on ``args.security``, run ``workload``'s
    phases with ``args.clients``, stop it; one sample per phase. ``tls`` collects the TLS
    version and cipher suite each system negotiated."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{system}-") as tmp, ExitStack() as stack:
        security = listener_security(args.security, Path(tmp) / "security")
        with pinned(broker_cpus):
            running = stack.enter_context(STARTERS[system](Path(tmp), workload.nodes, security))
        _log(f"{system} ready in {running.ready_seconds:.1f} s at {running.bootstrap}")
        if security.tls:
            tls[system] = negotiated_tls(running.bootstrap, security)
            _log(f"{system} {args.security} listener: {tls[system]}")
        configs = {"min.insync.replicas": "2"} if workload.replication > 1 else {}
        create_topic(running.client, TOPIC, workload.partitions, workload.replication, configs)
        phases = list(_phases(workload, running, rates, Path(tmp), args.clients))
        peak_rss = max(peak_rss_bytes(pid) for pid in running.broker_pids)
    samples = []
    for phase, result in phases:
        moved = result.moved
        p50, p99, p999 = moved.latencies or (float("nan"),) * 3
        samples.append(
            Sample(
                workload=workload.name,
                setting=workload.describe(),
                phase=phase,
                system=system,
                round=round_number,
                records_per_s=moved.records / moved.seconds,
                mb_per_s=moved.size / 1e6 / moved.seconds,
                p50_ms=p50 * 1e3,
                p99_ms=p99 * 1e3,
                p999_ms=p999 * 1e3,
                cpu_s_per_gb=result.cpu_seconds / (moved.size / 1e9),
                broker_cpu_pct=100 * result.cpu_seconds / moved.seconds,
                client_cpu_pct=100 * moved.client_cpu_seconds / moved.seconds,
                peak_rss_mib=peak_rss / MIB,
                ready_s=running.ready_seconds,
            )
        )
        sample = samples[-1]
        _log(
            f"{system} {workload.name} {phase}: {sample.records_per_s:,.0f} records/s, "
            f"{sample.mb_per_s:,.1f} MB/s, {sample.cpu_s_per_gb:.2f} CPU s/GB, broker CPU "
            f"{sample.broker_cpu_pct:.0f}%, client CPU {sample.client_cpu_pct:.0f}%"
        )
    if workload.kind == "throughput":
        rates[(system, workload.name)] = samples[0].records_per_s
    return samples


def _phases(
    workload: Workload,
    running: RunningSystem,
    rates: dict[tuple[str, str], float],
    workdir: Path,
    clients: str,
) -> Iterator[tuple[str, PhaseResult]]:
    job = ProducerJob(
        TOPIC,
        workload.records,
        workload.record_size,
        workload.compression,
        workload.acks,
        workload.linger_ms,
        workload.batch_size,
    )
    client, pids = running.client, running.pids
    _warm_up(workload, running)
    if workload.kind == "latency":
        base = rates.get((running.name, workload.paced_from))
        if base is None:
            raise BenchError(f"{workload.name} needs {workload.paced_from} to run first")
        rate = LATENCY_LOAD * base
        paced = replace(job, records=int(rate * workload.seconds), rate=rate)
        _log(f"pacing at {rate:,.0f} records/s for {workload.seconds:g} s")
        yield "produce", run_phase("paced", produce_paced, client, paced, pids)
        return
    if workload.kind == "java":
        payloads = write_payloads(workdir / "payloads.txt", workload.record_size)
        config = client_config(workdir / "client.properties", running)
        yield "produce (Java)", java_produce(running, job, payloads, config)
        reader = ConsumerJob(TOPIC, job.records)
        yield "consume (Java)", java_consume(running, reader, workload.record_size, config)
        return
    if workload.kind == "transactions":
        committing = replace(job, transaction_ms=workload.transaction_ms)
        yield "produce (txn)", run_phase("produce", produce_transactional, client, committing, pids)
        reader = ConsumerJob(TOPIC, job.records, isolation="read_committed")
        yield "consume (read_committed)", run_phase("consume", consume, client, reader, pids)
        return
    read = "catch-up read" if workload.kind == "catch-up" else "consume"
    reader = ConsumerJob(TOPIC, job.records)
    if clients == "go":
        yield "produce (Go)", go_produce(running, job, write_pool(workdir / "pool.txt", job))
        yield f"{read} (Go)", go_consume(running, reader)
        return
    yield "produce", run_phase("produce", produce, client, job, pids)
    yield read, run_phase("consume", consume, client, reader, pids)


def _warm_up(workload: Workload, running: RunningSystem) -> None:
    """Produce and read back a little, unmeasured, on another topic: Kafka's JIT compiles
    its hot paths in the first seconds, which would otherwise count against it.
    """
    create_topic(running.client, WARM_UP_TOPIC, workload.partitions, workload.replication, {})
    records = WARM_UP_BYTES // workload.record_size
    job = ProducerJob(
        WARM_UP_TOPIC, records, workload.record_size, workload.compression, "1", 5, 65536
    )
    run_phase("warm-up", produce, running.client, job, running.pids)
    run_phase("warm-up", consume, running.client, ConsumerJob(WARM_UP_TOPIC, records), running.pids)


def _write_reports(
    args: argparse.Namespace, samples: list[Sample], context: dict[str, object]
) -> None:
    load = context.get("load_before"), context.get("load_after")
    security = str(context.get("security", "PLAINTEXT"))
    if context.get("clients") == "go":  # over PLAINTEXT only
        label, qualifier = "Go clients", " with Go clients"
    elif security != "PLAINTEXT":
        label, qualifier = security, f" over {security}"
    else:
        label, qualifier = "", ""
    preamble = (
        f"Run of {context['started']} (commit {context['commit']}, Kafka {context['kafka']}, "
        f"{context['rounds']} round(s){', --quick' if context['quick'] else ''}) on "
        f"{context['cpus']} CPUs, brokers pinned to CPU {context['broker_cpus']}, clients to "
        f"{context['load_cpus']}; load average (1, 5, 15 min) before {_load(load[0])}, after "
        f"{_load(load[1])}. Median (range) over rounds; latency only for the paced run."
        + _listener(security, context.get("tls"))
    )
    update_markdown(args.docs, markdown_table(samples), preamble, label)
    suffix = "-" + label.lower().replace(" ", "-") if label else ""
    chart = args.chart or ROOT / "docs" / f"benchmarks{suffix}.png"
    title = f"Odradek vs Kafka {context['kafka']}{qualifier}"
    write_chart(chart, samples, f"{title} ({context['started']})")
    _log(f"table in {args.docs}, chart in {chart}")


def _listener(security: str, tls: object) -> str:
    """What the clients' listener was, and the TLS each system negotiated, for the preamble."""
    if security == "PLAINTEXT":
        return ""
    agreed = tls if isinstance(tls, dict) else {}
    sasl = ", SASL PLAIN" if security.startswith("SASL_") else ""
    return (
        f" Clients on the {security} listener only (server-authenticated TLS{sasl}); "
        "negotiated: "
        + "; ".join(f"{system} {text}" for system, text in sorted(agreed.items()))
        + "."
    )


def _load(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return " / ".join(f"{float(v):.1f}" for v in value)
    return "?"


def _git_commit() -> str:
    result = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout.strip() or "?"


def _log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
