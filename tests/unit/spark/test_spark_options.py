"""Option parsing of format odradek: Spark's Kafka source rules, errors naming the option."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from odradek.config_references import UnreadableReference
from odradek.spark.client_config import consumer_config, producer_config
from odradek.spark.offsets import TopicPartition
from odradek.spark.options import (
    AtTimestamp,
    Earliest,
    Latest,
    OptionError,
    SpecificOffsets,
    parse_read_options,
    parse_write_options,
)
from odradek.spark.pipelines.streaming_job import _property
from odradek.spark.subscription import Assign, Subscribe, SubscribePattern

BASE = {"kafka.bootstrap.servers": "b:9092", "subscribe": "a, b"}


def test_defaults_follow_sparks_kafka_source() -> None:
    batch = parse_read_options(BASE, streaming=False)
    assert batch.subscription == Subscribe(("a", "b"))
    assert batch.starting == Earliest() and batch.ending == Latest()
    assert batch.fail_on_data_loss and not batch.include_headers
    assert parse_read_options(BASE, streaming=True).starting == Latest()


def test_keys_are_case_insensitive_and_kafka_options_reach_the_client() -> None:
    options = parse_read_options(
        {
            "KAFKA.BOOTSTRAP.SERVERS": "b:1",
            "subscribePattern": "t-.*",
            "kafka.fetch.max.bytes": "9",
        },
        streaming=True,
    )
    assert options.bootstrap_servers == "b:1"
    assert options.subscription == SubscribePattern("t-.*")
    assert options.client_settings == {"fetch.max.bytes": "9"}


def test_specific_offsets_and_assign_parse_from_json() -> None:
    options = parse_read_options(
        {
            "kafka.bootstrap.servers": "b:1",
            "assign": '{"t": [0, 1]}',
            "startingOffsets": '{"t": {"0": 5, "1": -2}}',
            "endingOffsets": '{"t": {"0": -1, "1": 9}}',
        },
        streaming=False,
    )
    assert options.subscription == Assign((TopicPartition("t", 0), TopicPartition("t", 1)))
    assert options.starting == SpecificOffsets(
        {TopicPartition("t", 0): 5, TopicPartition("t", 1): -2}
    )
    assert options.ending == SpecificOffsets(
        {TopicPartition("t", 0): -1, TopicPartition("t", 1): 9}
    )


def test_starting_timestamp_wins_over_starting_offsets() -> None:
    options = parse_read_options(
        {**BASE, "startingTimestamp": "1000", "startingOffsets": "latest"}, streaming=True
    )
    assert options.starting == AtTimestamp(1000)


@pytest.mark.parametrize(
    ("options", "streaming", "named"),
    [
        ({"subscribe": "t"}, True, "kafka.bootstrap.servers"),
        ({"kafka.bootstrap.servers": "b:1"}, True, "subscribe"),
        ({**BASE, "assign": '{"t": [0]}'}, True, "subscribe"),
        ({**BASE, "startingOffsets": "latest"}, False, "startingOffsets"),
        ({**BASE, "startingOffsets": '{"t": {"0": -1}}'}, False, "startingOffsets"),
        ({**BASE, "startingOffsets": "{bad"}, True, "startingOffsets"),
        ({**BASE, "startingOffsets": '{"t": {"0": -3}}'}, True, "startingOffsets"),
        ({**BASE, "endingOffsets": "earliest"}, False, "endingOffsets"),
        ({**BASE, "endingOffsets": "latest"}, True, "endingOffsets"),
        ({**BASE, "maxOffsetsPerTrigger": "0"}, True, "maxOffsetsPerTrigger"),
        ({**BASE, "maxOffsetsPerTrigger": "10"}, False, "maxOffsetsPerTrigger"),
        ({**BASE, "minPartitions": "x"}, False, "minPartitions"),
        ({**BASE, "failOnDataLoss": "yes"}, True, "failOnDataLoss"),
        ({**BASE, "startingTimestamp": "-5"}, True, "startingTimestamp"),
        ({**BASE, "kafka.auto.offset.reset": "earliest"}, True, "kafka.auto.offset.reset"),
        ({**BASE, "kafka.enable.auto.commit": "true"}, True, "kafka.enable.auto.commit"),
        ({"kafka.bootstrap.servers": "b:1", "subscribePattern": "("}, True, "subscribePattern"),
        ({"kafka.bootstrap.servers": "b:1", "assign": '{"t": ["x"]}'}, True, "assign"),
    ],
)
def test_bad_options_fail_with_a_message_naming_the_option(
    options: dict[str, str], streaming: bool, named: str
) -> None:
    with pytest.raises(OptionError, match=named.replace(".", r"\.")):
        parse_read_options(options, streaming)


def test_write_options_need_bootstrap_and_a_non_empty_topic() -> None:
    assert parse_write_options({"kafka.bootstrap.servers": "b:1", "topic": "t"}).topic == "t"
    with pytest.raises(OptionError, match="topic"):
        parse_write_options({"kafka.bootstrap.servers": "b:1", "topic": " "})


def test_client_settings_read_secrets_from_files_where_the_client_is_made(
    tmp_path: Path,
) -> None:
    (tmp_path / "password").write_text("s3cret\n")
    settings = {"sasl.password": f"${{directory:{tmp_path}:password}}", "acks": "all"}
    config = consumer_config("b:9092", settings)
    assert config["sasl.password"] == "s3cret" and config["acks"] == "all"
    with pytest.raises(UnreadableReference, match=r"sasl\.password: cannot read"):
        producer_config("b:9092", {"sasl.password": f"${{directory:{tmp_path}:missing}}"})


def test_a_pipeline_takes_kafka_client_settings_with_x() -> None:
    parsed = _property("sasl.password=${directory:/etc/odradek/user:password}")
    assert parsed == ("sasl.password", "${directory:/etc/odradek/user:password}")
    with pytest.raises(argparse.ArgumentTypeError, match="expected KEY=VALUE"):
        _property("no-equals-sign")
