"""Check the columns written to a topic, with the rules of Spark's Kafka sink."""

from __future__ import annotations

from collections.abc import Mapping

from odradek.spark.options import OptionError

BYTES_TYPES = ("binary", "string")
HEADERS_TYPE = "array<struct<key:string,value:binary>>"
_ALLOWED = {
    "value": BYTES_TYPES,
    "key": BYTES_TYPES,
    "topic": ("string",),
    "partition": ("int",),
    "headers": (HEADERS_TYPE,),
}


class SinkSchemaError(ValueError):
    """The DataFrame written does not have the columns a topic sink takes."""


def check_sink_columns(columns: Mapping[str, str], topic_option: str | None) -> None:
    """Check ``columns``: names mapped to Spark simple type strings (``simpleString()``).

    ``value`` is required; ``key``, ``topic``, ``partition`` and ``headers`` are
    optional; other columns are ignored. Without a ``topic`` column the ``topic``
    option is required.
    """
    if "value" not in columns:
        raise SinkSchemaError("a 'value' column (binary or string) is required")
    for name, allowed in _ALLOWED.items():
        if name in columns and columns[name] not in allowed:
            raise SinkSchemaError(
                f"column {name!r} must be {' or '.join(allowed)}, not {columns[name]}"
            )
    if "topic" not in columns and topic_option is None:
        raise OptionError("option 'topic' is required when there is no 'topic' column")
