"""``odradek cluster up|status``: run a local cluster, show a cluster's health."""

from __future__ import annotations

import argparse
import signal
import tempfile
import time
from pathlib import Path
from types import FrameType

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

from odradek.cli.child_process import ProcessStartError, wait_until
from odradek.cli.client_options import (
    DEFAULT_TIMEOUT_S,
    CliError,
    add_client_options,
    client_config,
    cluster_call_failed,
    command,
    int_at_least,
    key_value,
    positive_int,
    status,
    went_unanswered,
)
from odradek.cli.cluster_state import ClusterState, format_state, read_cluster_state
from odradek.cli.etcd_process import EtcdTls
from odradek.cli.local_cluster import LocalCluster, etcd_members_in
from odradek.cli.text_table import format_table

CRASH_CHECK_INTERVAL_S = 1.0
_ETCD_TLS_FLAGS = {
    "etcd-cert-file": "etcd's server certificate",
    "etcd-key-file": "etcd's private key",
    "etcd-trusted-ca-file": "the CA that signed etcd's and the brokers' certificates",
    "etcd-client-keystore": "the brokers' client certificate: its key and chain in one file",
}
STATE_ATTEMPT_S = 5.0  # one attempt at reading the cluster state, before a new client


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "cluster",
        help="run a local cluster, show brokers, controller and partition health",
        description="Local clusters and cluster health.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    up = actions.add_parser(
        "up",
        help="start etcd and N brokers on this machine until Ctrl-C",
        description=(
            "Start etcd and N brokers as child processes on 127.0.0.1, each broker with its "
            "own data dir and ports, wait until all are ready, print the bootstrap servers and "
            "the cluster's state, and keep running. Ctrl-C or SIGTERM stops the brokers one at "
            "a time (controlled shutdown), then etcd."
        ),
    )
    up.add_argument("--brokers", type=positive_int, default=3, help="(default: 3)")
    up.add_argument(
        "--etcd-members",
        type=positive_int,
        default=1,
        metavar="N",
        help="etcd members to run, each broker given all of them; an odd number N keeps "
        "working through the loss of (N-1)/2 members, 3 through the loss of one "
        "(default: 1)",
    )
    up.add_argument(
        "--racks",
        type=_racks,
        default=(),
        metavar="A,B,...",
        help="racks assigned to the brokers round-robin (broker.rack)",
    )
    up.add_argument(
        "--data-dir",
        type=Path,
        help="where etcd and the brokers keep their data, kept on exit and reused by the "
        "next run (default: a temporary directory removed on exit)",
    )
    up.add_argument(
        "--base-port",
        type=int_at_least(1024),
        help="broker i listens on P+i (Kafka) and P+100+i (HTTP), etcd member i on P+200+2i "
        "(clients) and P+201+2i (peers) (default: free ports)",
    )
    up.add_argument(
        "--set",
        dest="settings",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker configuration key for every broker; repeatable",
    )
    up.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long to wait for every process to be ready (default: {DEFAULT_TIMEOUT_S:g})",
    )
    tls = up.add_argument_group(
        "etcd over TLS",
        "serve etcd over https, requiring client certificates (all four options, PEM files; "
        "a single etcd member only)",
    )
    for flag, text in _ETCD_TLS_FLAGS.items():
        tls.add_argument(f"--{flag}", type=Path, metavar="FILE", help=text)
    up.add_argument("-q", "--quiet", action="store_true", help="print no progress lines")
    up.set_defaults(run=_up, client_properties=[])

    status_parser = actions.add_parser(
        "status", help="brokers, controller, offline and under-replicated partitions"
    )
    add_client_options(status_parser)
    status_parser.set_defaults(run=_status)


def _racks(text: str) -> tuple[str, ...]:
    racks = tuple(rack.strip() for rack in text.split(","))
    if not all(racks):
        raise argparse.ArgumentTypeError(f"expected comma-separated rack names, got {text!r}")
    return racks


@command
def _status(args: argparse.Namespace) -> int:
    status(args, f"Reading the state of the cluster at {args.bootstrap_server}.")
    for line in format_state(_read_state(args)):
        print(line)
    return 0


def _read_state(args: argparse.Namespace) -> ClusterState:
    """Read the state, asking again with a new client while the cluster does not answer.

    librdkafka sends DescribeCluster to the controller named in its first metadata and
    waits for it; right after the controller died that one never answers, while a new
    client learns the next controller.
    """
    deadline = time.monotonic() + args.timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            return read_cluster_state(
                AdminClient(client_config(args)), min(STATE_ATTEMPT_S, max(remaining, 0.1))
            )
        except KafkaException as error:
            if not went_unanswered(error) or time.monotonic() >= deadline:
                raise cluster_call_failed(args, error, "cannot read the cluster state") from error
            status(args, "no answer yet (the controller may just have changed); asking again")


def _etcd_tls(args: argparse.Namespace) -> EtcdTls | None:
    """The TLS etcd serves with: all four files, each readable, or none (one member only)."""
    files = {flag: getattr(args, flag.replace("-", "_")) for flag in _ETCD_TLS_FLAGS}
    if not any(files.values()):
        return None
    if args.etcd_members > 1:
        given = ", ".join(f"--{flag}" for flag, path in files.items() if path is not None)
        raise CliError(
            f"{given} cannot be used with --etcd-members {args.etcd_members}: "
            "only a single etcd member serves TLS"
        )
    missing = [f"--{flag}" for flag, path in files.items() if path is None]
    if missing:
        raise CliError(f"etcd over TLS needs {', '.join(missing)} as well")
    for flag, path in files.items():
        if not path.is_file():
            raise CliError(f"--{flag}: {path} is not a file")
    keystore = files["etcd-client-keystore"]
    return EtcdTls(
        files["etcd-cert-file"],
        files["etcd-key-file"],
        files["etcd-trusted-ca-file"],
        client_cert=keystore,
        client_key=keystore,
    )


def _check_reused_etcd(args: argparse.Namespace) -> None:
    """Refuse to start etcd on a reused data dir in a way it cannot restart."""
    found = etcd_members_in(args.data_dir)
    if found and found != args.etcd_members:
        raise CliError(f"{args.data_dir} holds {found} etcd member(s): use --etcd-members {found}")
    if found > 1 and args.base_port is None:
        raise CliError(
            f"{args.data_dir} holds {found} etcd members, which find each other at the ports "
            "they first ran on: use the --base-port they were started with"
        )


def _etcd_client_settings(tls: EtcdTls | None) -> dict[str, str]:
    if tls is None:
        return {}
    return {
        "etcd.ssl.truststore.location": str(tls.trusted_ca_file),
        "etcd.ssl.keystore.location": str(tls.client_cert),
    }


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@command
def _up(args: argparse.Namespace) -> int:
    etcd_tls = _etcd_tls(args)
    temporary = args.data_dir is None
    if not temporary:
        _check_reused_etcd(args)
    data_dir = Path(tempfile.mkdtemp(prefix="odradek-cluster-")) if temporary else args.data_dir
    cluster = LocalCluster(
        data_dir,
        args.brokers,
        racks=args.racks,
        base_port=args.base_port,
        settings={**_etcd_client_settings(etcd_tls), **dict(args.settings)},
        etcd_tls=etcd_tls,
        report=lambda message: status(args, message),
        etcd_members=args.etcd_members,
    )
    signal.signal(signal.SIGTERM, _raise_interrupt)  # SIGINT raises KeyboardInterrupt already
    try:
        cluster.start(args.timeout)
        args.bootstrap_server = cluster.bootstrap_servers  # for the client helpers
        _show_started(args, cluster, temporary)
        _run_until_interrupted(args, cluster)
    except ProcessStartError as error:
        raise CliError(f"cannot start the cluster: {error}") from None
    except KeyboardInterrupt:
        status(args, "stopping the cluster")
    finally:
        _shut_down(args, cluster)
        if temporary:
            cluster.remove_data()
    return 0


def _run_until_interrupted(args: argparse.Namespace, cluster: LocalCluster) -> None:
    """Sleep until Ctrl-C or SIGTERM, saying so when a broker or etcd member exits on its
    own (the others keep running: a killed one is how one tries failover)."""
    reported: set[str] = set()
    while True:
        time.sleep(CRASH_CHECK_INTERVAL_S)
        for child, code in cluster.exited():
            if child.name not in reported:
                reported.add(child.name)
                status(args, f"{child.name} exited with code {code} (log: {child.log_path})")


def _shut_down(args: argparse.Namespace, cluster: LocalCluster) -> None:
    """A clean stop; a second Ctrl-C or SIGTERM kills what is left instead."""
    try:
        cluster.stop()
    except KeyboardInterrupt:
        status(args, "interrupted again: killing the remaining processes")
        cluster.kill()


def _show_started(args: argparse.Namespace, cluster: LocalCluster, temporary: bool) -> None:
    expected = len(cluster.specs)
    state = _read_state(args)

    def settled() -> bool:
        nonlocal state
        state = _read_state(args)
        return state.controller_id >= 0 and len(state.brokers) == expected

    try:
        wait_until(settled, args.timeout, "a controller and every broker registered")
    except TimeoutError as error:
        status(args, f"warning: {error}")
    kept = "removed on exit" if temporary else "kept on exit"
    lines = [
        f"Bootstrap servers: {cluster.bootstrap_servers}",
        f"  export ODRADEK_BOOTSTRAP_SERVERS={cluster.bootstrap_servers}",
        f"etcd: {cluster.etcd_endpoints}",
        f"Data: {cluster.data_dir} ({kept})",
        "",
        *format_state(state),
        "",
        *format_table(
            ("ID", "PID", "HTTP", "LOG"),
            (
                (b.spec.node_id, b.process.pid, b.spec.http_port, b.process.log_path)
                for b in cluster.brokers
            ),
        ),
        "",
        *format_table(
            ("ETCD", "PID", "CLIENT URL", "LOG"),
            ((m.name, m.process.pid, m.endpoint, m.process.log_path) for m in cluster.etcd.members),
        ),
        "",
        "Press Ctrl-C to stop the cluster.",
    ]
    print("\n".join(lines), flush=True)
