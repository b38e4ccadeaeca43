"""The bench's pure pieces: percentiles, spreads, ratios, Kafka tool output, the table."""

from __future__ import annotations

import math

from compare_report import Sample, markdown_table
from java_clients import parse_consumer_summary, parse_producer_summary
from measure import Spread, percentile, ratio
from scale_report import table


def test_percentile_is_nearest_rank_without_interpolation() -> None:
    values = [float(v) for v in range(1, 1001)]
    assert percentile(values, 0.5) == 500
    assert percentile(values, 0.99) == 990
    assert percentile(values, 0.999) == 999
    assert percentile([3.0, 1.0, 2.0], 1.0) == 3
    assert percentile([7.0], 0.999) == 7
    assert math.isnan(percentile([], 0.5))


def test_spread_is_median_and_range_ignoring_missing_values() -> None:
    assert Spread.of([3.0, 1.0, 2.0, math.nan]) == Spread(2.0, 1.0, 3.0)
    assert math.isnan(Spread.of([math.nan]).median)


def test_ratio_is_nan_when_a_side_is_missing_or_zero() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert math.isnan(ratio(1.0, 0.0))
    assert math.isnan(ratio(math.nan, 1.0))


def test_kafka_perf_tool_summaries_are_parsed() -> None:
    producer = (
        "50000 records sent, 10000.0 records/sec (9.77 MB/sec), 5.0 ms avg latency\n"
        "100000 records sent, 49975.0 records/sec (48.80 MB/sec), 388.07 ms avg latency, "
        "602.00 ms max latency, 388 ms 50th, 585 ms 95th, 600 ms 99th, 602 ms 99.9th.\n"
    )
    assert parse_producer_summary(producer) == (100000, 49975.0)
    consumer = (
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
        "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec\n"
        "2026-11-21 11:00:00:000, 2026-11-21 11:00:05:000, 97.6563, 19.5313, 100000, "
        "20000.0, 3000, 2000, 48.8281, 50000.0\n"
    )
    assert parse_consumer_summary(consumer) == (100000, 2000.0)


def test_table_has_a_ratio_row_of_medians_per_workload_and_phase() -> None:
    def sample(system: str, round_number: int, rate: float) -> Sample:
        nan = math.nan
        return Sample("w", "6p", "produce", system, round_number, rate, rate / 1000,
                      nan, nan, nan, 2.0, 100.0, 1.0)  # fmt: skip

    samples = [sample("odradek", 0, 100), sample("kafka", 0, 200), sample("odradek", 1, 300)]
    table = markdown_table(samples)
    assert "| w (6p) | produce | odradek | 200 (100..300) |" in table
    assert "| **Odradek/Kafka** | **1.00** | **1.00** | - | - | - | **1.00**" in table


def test_scale_table_gives_each_measure_its_ratio_and_direction() -> None:
    measures = (("rss", "RSS (MiB)", False), ("rate", "records/s", True))
    results = {"odradek": {"rss": 100.0, "rate": 3000.0}, "kafka": {"rss": 400.0}}
    assert table(measures, results).splitlines() == [
        "| measure | odradek | kafka | Odradek/Kafka |",
        "|---|---|---|---|",
        "| RSS (MiB) | 100 | 400 | 0.25x (lower is better) |",
        "| records/s | 3,000 | n/a | n/a (higher is better) |",
    ]
