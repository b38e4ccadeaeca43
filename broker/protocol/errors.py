"""Kafka error codes as exceptions that carry them.

The codes themselves are kio's ``ErrorCode`` enum (Kafka's own numbering), so
every layer of the broker raises ``KafkaError`` with a code and the request
handlers turn it into the response field.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError"]


class KafkaError(Exception):
    """A failure that maps to one Kafka error code."""

    def __init__(self, code: ErrorCode, message: str = "") -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message or code.name
