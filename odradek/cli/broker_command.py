"""``odradek broker``: run a broker until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import signal
import sys
from pathlib import Path

from odradek.broker.config.broker_config import BrokerConfig, parse_assignments
from odradek.broker.config.definitions import DEFAULT_DATA_DIR, ConfigError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "broker",
        help="run a broker",
        description=(
            "Run an Odradek broker. Configuration uses Kafka's names and comes from a "
            "properties file, ODRADEK_<NAME> environment variables (dots as underscores, "
            "e.g. ODRADEK_LOG_DIRS) and --set flags, in increasing precedence. With no "
            f"etcd configured the broker runs alone, keeping its data in {DEFAULT_DATA_DIR} "
            "unless log.dirs says otherwise."
        ),
    )
    parser.add_argument("--config", type=Path, help="a properties file (key=value lines)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a configuration key, e.g. --set listeners=PLAINTEXT://127.0.0.1:9092",
    )
    parser.add_argument("--data-dir", help="shorthand for --set log.dirs=DIR")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING or ERROR")
    parser.set_defaults(run=run)


def raise_open_file_limit() -> int:
    """Lift the soft limit on open files to the hard one, as the JVM does for Kafka
    (``-XX:+MaxFDLimit``, on by default): a broker holds a descriptor per segment and per
    connection, and systemd's soft default of 1024 would stop it at a few hundred
    partitions. Returns the limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    most = hard
    if hard == resource.RLIM_INFINITY:
        most = int(Path("/proc/sys/fs/nr_open").read_text())
    if soft == resource.RLIM_INFINITY or soft >= most:
        return soft
    resource.setrlimit(resource.RLIMIT_NOFILE, (most, hard))
    return most


def run(args: argparse.Namespace) -> int:
    try:
        overrides = parse_assignments(args.overrides)
        if args.data_dir:
            overrides.setdefault("log.dirs", args.data_dir)
        config = BrokerConfig.load(args.config, overrides=overrides)
    except ConfigError as error:
        print(f"odradek broker: invalid configuration: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=args.log_level.upper(),
        format=f"%(asctime)s %(levelname)s broker={config.node_id} %(name)s: %(message)s",
    )
    logging.getLogger(__name__).info("open file limit: %d", raise_open_file_limit())
    from odradek.broker.server.broker_server import (
        DataDirFailed,
        DataDirInUse,
        LogDirsFailed,
        run_broker,
    )

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await run_broker(config, stop)

    try:
        asyncio.run(main())
    except ConfigError as error:  # what only starting can check: TLS stores, JWKS, PLAIN users
        print(f"odradek broker: invalid configuration: {error}", file=sys.stderr)
        return 2
    except (DataDirInUse, DataDirFailed, OSError) as error:
        print(f"odradek broker: cannot start: {error}", file=sys.stderr)
        return 1
    except LogDirsFailed as error:
        print(f"odradek broker: halted: {error}", file=sys.stderr)
        return 1
    return 0
