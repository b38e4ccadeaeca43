"""Turning exceptions into the error fields of responses."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


def error_of(error: Exception) -> tuple[ErrorCode, str | None]:
    """The Kafka error code and message for an exception raised while serving a request."""
    if isinstance(error, KafkaError):
        return error.code, error.message
    log.exception("unexpected error while serving a request", exc_info=error)
    return ErrorCode.unknown_server_error, str(error)


def answer_or_error(
    answer: Callable[[], Mapping[str, Any]],
    failed: Mapping[str, Any],
    message_field: str | None = None,
) -> dict[str, Any]:
    """One item of a response (a partition, a topic, a resource): ``answer()`` with error
    code NONE, or, if it raises, ``failed`` with the failure's code; ``message_field``
    carries the error message (None on success)."""
    try:
        return _answered(answer(), message_field)
    except Exception as error:  # every failure becomes this item's error code
        return _failed(error, failed, message_field)


async def awaited_answer_or_error(
    answer: Callable[[], Awaitable[Mapping[str, Any]]],
    failed: Mapping[str, Any],
    message_field: str | None = None,
) -> dict[str, Any]:
    """``answer_or_error`` for an answer that must be awaited."""
    try:
        return _answered(await answer(), message_field)
    except Exception as error:  # every failure becomes this item's error code
        return _failed(error, failed, message_field)


def _answered(answer: Mapping[str, Any], message_field: str | None) -> dict[str, Any]:
    result = {"error_code": ErrorCode.none, **answer}
    if message_field is not None:
        result.setdefault(message_field, None)
    return result


def _failed(
    error: Exception, failed: Mapping[str, Any], message_field: str | None
) -> dict[str, Any]:
    code, message = error_of(error)
    result = {**failed, "error_code": code}
    if message_field is not None:
        result[message_field] = message
    return result
