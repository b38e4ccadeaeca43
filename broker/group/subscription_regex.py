"""Topic subscriptions by regular expression in RE2 syntax, as Kafka's coordinator reads
them (Kafka uses RE2/J): a pattern matches whole topic names."""

from __future__ import annotations

import functools
from typing import Any

import re2  # type: ignore[import-untyped]

from odradek.broker.protocol.errors import ErrorCode, KafkaError


@functools.lru_cache(maxsize=1024)
def compiled_regex(pattern: str) -> Any:
    """The compiled pattern; INVALID_REGULAR_EXPRESSION for what RE2 refuses."""
    options = re2.Options()
    options.log_errors = False  # a client's bad pattern is its error, not a broker log line
    try:
        return re2.compile(pattern, options=options)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        message = reason.decode() if isinstance(reason, bytes) else reason
        raise KafkaError(
            ErrorCode.invalid_regular_expression, f"SubscribedTopicRegex {pattern!r}: {message}"
        ) from None


def matches(pattern: str, topic: str) -> bool:
    return compiled_regex(pattern).fullmatch(topic) is not None
