"""Parse and check the data source's options, with Spark's Kafka source names and rules.

Every error is an :class:`OptionError` whose message names the option. Keys are
case-insensitive, as in Spark; ``kafka.``-prefixed options go to the Kafka client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from odradek.spark.offsets import EARLIEST, LATEST, TopicPartition
from odradek.spark.subscription import Assign, Subscribe, SubscribePattern, Subscription

BOOTSTRAP = "kafka.bootstrap.servers"
KAFKA_PREFIX = "kafka."
DEFAULT_POLL_TIMEOUT_MS = 120_000

# Client settings the source manages itself (as Spark's Kafka source refuses them).
_MANAGED_CLIENT_SETTINGS = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead",
    "enable.auto.commit": "offsets live in Spark's checkpoint; nothing is committed",
    "key.deserializer": "keys are always read as bytes",
    "value.deserializer": "values are always read as bytes",
    "key.serializer": "keys are always written as bytes",
    "value.serializer": "values are always written as bytes",
}


class OptionError(ValueError):
    """An option is missing, unknown in this context, or has a bad value."""


@dataclass(frozen=True)
class Earliest:
    """Each partition's log start offset."""


@dataclass(frozen=True)
class Latest:
    """Each partition's high watermark."""


@dataclass(frozen=True)
class SpecificOffsets:
    """Offsets per partition; ``EARLIEST`` (-2) and ``LATEST`` (-1) stand for those."""

    offsets: Mapping[TopicPartition, int]


@dataclass(frozen=True)
class AtTimestamp:
    """The first offset of each partition whose timestamp is >= ``timestamp_ms``."""

    timestamp_ms: int


OffsetSpec = Earliest | Latest | SpecificOffsets | AtTimestamp
TimestampStrategy = Literal["error", "latest"]


@dataclass(frozen=True)
class ReadOptions:
    bootstrap_servers: str
    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    fail_on_data_loss: bool = True
    include_headers: bool = False
    timestamp_strategy: TimestampStrategy = "error"
    poll_timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS
    client_settings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WriteOptions:
    bootstrap_servers: str
    topic: str | None = None
    client_settings: Mapping[str, str] = field(default_factory=dict)


def parse_read_options(options: Mapping[str, str], streaming: bool) -> ReadOptions:
    """Options of a batch (``streaming=False``) or streaming read, checked."""
    opts = {key.lower(): value for key, value in options.items()}
    if streaming and "endingoffsets" in opts:
        raise OptionError("option 'endingOffsets' is for batch queries only")
    if not streaming and "maxoffsetspertrigger" in opts:
        raise OptionError("option 'maxOffsetsPerTrigger' is for streaming queries only")
    starting = _starting_offsets(opts, streaming)
    ending = _offset_spec(opts, "endingOffsets", Latest())
    if isinstance(ending, Earliest) or (
        isinstance(ending, SpecificOffsets) and EARLIEST in ending.offsets.values()
    ):
        raise OptionError("option 'endingOffsets' cannot be earliest (-2)")
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").lower()
    if strategy not in ("error", "latest"):
        raise OptionError(
            f"option 'startingOffsetsByTimestampStrategy' must be error or latest, not {strategy!r}"
        )
    return ReadOptions(
        bootstrap_servers=_bootstrap(opts),
        subscription=_subscription(opts),
        starting=starting,
        ending=ending,
        max_offsets_per_trigger=_positive_int(opts, "maxOffsetsPerTrigger"),
        min_partitions=_positive_int(opts, "minPartitions"),
        fail_on_data_loss=_boolean(opts, "failOnDataLoss", default=True),
        include_headers=_boolean(opts, "includeHeaders", default=False),
        timestamp_strategy="latest" if strategy == "latest" else "error",
        poll_timeout_ms=_positive_int(opts, "kafkaConsumer.pollTimeoutMs")
        or DEFAULT_POLL_TIMEOUT_MS,
        client_settings=_client_settings(opts),
    )


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    """Options of a batch or streaming write, checked."""
    opts = {key.lower(): value for key, value in options.items()}
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise OptionError("option 'topic' must not be empty")
    return WriteOptions(_bootstrap(opts), topic, _client_settings(opts))


def _bootstrap(opts: Mapping[str, str]) -> str:
    servers = opts.get(BOOTSTRAP, "").strip()
    if not servers:
        raise OptionError(f"option '{BOOTSTRAP}' is required (host:port[,host:port...])")
    return servers


def _client_settings(opts: Mapping[str, str]) -> dict[str, str]:
    settings = {}
    for key, value in opts.items():
        if key.startswith(KAFKA_PREFIX) and key != BOOTSTRAP:
            name = key[len(KAFKA_PREFIX) :]
            if name in _MANAGED_CLIENT_SETTINGS:
                raise OptionError(
                    f"option '{key}' is not supported: {_MANAGED_CLIENT_SETTINGS[name]}"
                )
            settings[name] = value
    return settings


def _subscription(opts: Mapping[str, str]) -> Subscription:
    given = [name for name in ("subscribe", "subscribepattern", "assign") if name in opts]
    if len(given) != 1:
        raise OptionError(
            "exactly one of the options 'subscribe', 'subscribePattern', 'assign' is required"
            + (f" (got {', '.join(given)})" if given else "")
        )
    if "subscribe" in opts:
        topics = tuple(t.strip() for t in opts["subscribe"].split(",") if t.strip())
        if not topics:
            raise OptionError("option 'subscribe' names no topic")
        return Subscribe(topics)
    if "subscribepattern" in opts:
        pattern = opts["subscribepattern"]
        try:
            re.compile(pattern)
        except re.error as error:
            raise OptionError(f"option 'subscribePattern' is not a valid regex: {error}") from None
        return SubscribePattern(pattern)
    return Assign(_assigned_partitions(opts["assign"]))


def _assigned_partitions(text: str) -> tuple[TopicPartition, ...]:
    data = _json_object(text, "assign", 'e.g. {"topicA": [0, 1]}')
    partitions: list[TopicPartition] = []
    for topic, numbers in data.items():
        if not isinstance(numbers, list) or not all(_is_int(n) and n >= 0 for n in numbers):
            raise OptionError(f"option 'assign': topic {topic!r} needs a list of partitions")
        partitions.extend(TopicPartition(topic, n) for n in numbers)
    if not partitions:
        raise OptionError("option 'assign' names no partition")
    return tuple(partitions)


def _starting_offsets(opts: Mapping[str, str], streaming: bool) -> OffsetSpec:
    if "startingtimestamp" in opts:
        timestamp = _int(opts, "startingTimestamp")
        if timestamp < 0:
            raise OptionError("option 'startingTimestamp' must be >= 0 (ms since the epoch)")
        return AtTimestamp(timestamp)
    spec = _offset_spec(opts, "startingOffsets", Latest() if streaming else Earliest())
    if not streaming and (
        isinstance(spec, Latest)
        or (isinstance(spec, SpecificOffsets) and LATEST in spec.offsets.values())
    ):
        raise OptionError("option 'startingOffsets' cannot be latest (-1) for batch queries")
    return spec


def _offset_spec(opts: Mapping[str, str], name: str, default: OffsetSpec) -> OffsetSpec:
    text = opts.get(name.lower())
    if text is None:
        return default
    if text.strip().lower() == "earliest":
        return Earliest()
    if text.strip().lower() == "latest":
        return Latest()
    data = _json_object(text, name, 'earliest, latest or e.g. {"topicA": {"0": 23, "1": -2}}')
    offsets = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, dict):
            raise OptionError(f"option {name!r}: topic {topic!r} needs {{partition: offset}}")
        for partition, offset in partitions.items():
            if not (partition.isdigit() and _is_int(offset) and offset >= EARLIEST):
                raise OptionError(
                    f"option {name!r}: {topic!r} partition {partition!r} has a bad offset "
                    f"{offset!r} (use >= 0, -1 for latest, -2 for earliest)"
                )
            offsets[TopicPartition(topic, int(partition))] = offset
    return SpecificOffsets(offsets)


def _json_object(text: str, name: str, example: str) -> dict[str, object]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict):
        raise OptionError(f"option {name!r} must be {example}, not {text!r}")
    return data


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(opts: Mapping[str, str], name: str) -> int:
    text = opts[name.lower()].strip()
    try:
        return int(text)
    except ValueError:
        raise OptionError(f"option {name!r} must be an integer, not {text!r}") from None


def _positive_int(opts: Mapping[str, str], name: str) -> int | None:
    if name.lower() not in opts:
        return None
    value = _int(opts, name)
    if value <= 0:
        raise OptionError(f"option {name!r} must be > 0, not {value}")
    return value


def _boolean(opts: Mapping[str, str], name: str, default: bool) -> bool:
    text = opts.get(name.lower())
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise OptionError(f"option {name!r} must be true or false, not {text!r}")
    return text.strip().lower() == "true"
