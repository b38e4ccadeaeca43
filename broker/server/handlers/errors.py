"""Turning exceptions into the error fields of responses."""

from __future__ import annotations

import logging

from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


def error_of(error: Exception) -> tuple[ErrorCode, str | None]:
    """The Kafka error code and message for an exception raised while serving a request."""
    if isinstance(error, KafkaError):
        return error.code, error.message
    log.exception("unexpected error while serving a request", exc_info=error)
    return ErrorCode.unknown_server_error, str(error)
