"""The outcome of every TLS handshake a listening context serves: asyncio completes the
handshake before a connection reaches the broker and keeps a failure to itself, so the
context's SSL objects report each handshake's end (for Kafka's successful and failed
authentication counts, which include TLS)."""

from __future__ import annotations

import ssl
from collections.abc import Callable

HandshakeReport = Callable[[ssl.SSLError | None], None]
"""Called once a handshake ends: None when it succeeded, else why it failed."""


def report_handshakes(context: ssl.SSLContext, report: HandshakeReport) -> None:
    """Make each connection ``context`` serves from now on call ``report`` at the end of its
    handshake (a handshake in progress raises SSLWantRead/WriteError, which is no end)."""

    class ReportingSSLObject(ssl.SSLObject):
        def do_handshake(self) -> None:
            try:
                super().do_handshake()
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                raise
            except ssl.SSLError as error:
                report(error)
                raise
            report(None)

    context.sslobject_class = ReportingSSLObject
