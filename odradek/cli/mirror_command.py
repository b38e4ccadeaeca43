"""``odradek mirror --config FILE``: run MirrorMaker (see docs/mirrormaker.md).

The config file is the one the operator writes from a MirrorMaker resource.
``--http-listener`` (default ``$ODRADEK_HTTP_LISTENER``) serves /healthz,
/readyz and /metrics. SIGTERM or Ctrl-C stop it after committing what the
target acknowledged; a mirroring failure exits with code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from odradek.cli.client_options import CliError, command

if TYPE_CHECKING:
    from odradek.mirror.runtime import MirrorProcess

HTTP_LISTENER_ENV = "ODRADEK_HTTP_LISTENER"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mirror",
        help="mirror topics and consumer group offsets from one cluster to another",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config", required=True, type=Path, metavar="FILE", help="mirror.yaml to run"
    )
    parser.add_argument(
        "--http-listener",
        default=os.environ.get(HTTP_LISTENER_ENV),
        metavar="HOST:PORT",
        help=f"serve /healthz, /readyz and /metrics here (default: ${HTTP_LISTENER_ENV}; none)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR")
    )
    parser.set_defaults(run=run)


def http_address(text: str | None) -> tuple[str, int] | None:
    if not text:
        return None
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise CliError(f"--http-listener: expected HOST:PORT, got {text!r}")
    return host, int(port)


@command
def run(args: argparse.Namespace) -> int:
    from odradek.mirror.config import MirrorConfigError, load_config
    from odradek.mirror.runtime import MirrorProcess

    http = http_address(args.http_listener)
    try:
        config = load_config(args.config)
    except MirrorConfigError as error:
        raise CliError(f"mirror config: {error}") from None
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return asyncio.run(_serve(MirrorProcess(config), http))


async def _serve(process: MirrorProcess, http: tuple[str, int] | None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    return await process.run(stop, http)
