"""Sink column rules and the demo event generators."""

from __future__ import annotations

from itertools import islice

import pytest

from odradek.spark.options import OptionError
from odradek.spark.pipelines.clickstream import MAX_DISORDER_MS, PageView, page_views
from odradek.spark.pipelines.host_metrics import MetricSample, metric_samples
from odradek.spark.sink_columns import HEADERS_TYPE, SinkSchemaError, check_sink_columns


def test_sink_takes_value_and_optional_kafka_columns() -> None:
    check_sink_columns(
        {
            "value": "string",
            "key": "binary",
            "partition": "int",
            "headers": HEADERS_TYPE,
            "x": "int",
        },
        "t",
    )
    check_sink_columns({"value": "binary", "topic": "string"}, None)


@pytest.mark.parametrize(
    ("columns", "topic", "error", "named"),
    [
        ({"key": "string"}, "t", SinkSchemaError, "value"),
        ({"value": "int"}, "t", SinkSchemaError, "value"),
        ({"value": "string", "partition": "string"}, "t", SinkSchemaError, "partition"),
        ({"value": "string"}, None, OptionError, "topic"),
    ],
)
def test_sink_refuses_columns_it_cannot_write(
    columns: dict[str, str], topic: str | None, error: type[Exception], named: str
) -> None:
    with pytest.raises(error, match=named):
        check_sink_columns(columns, topic)


def test_page_views_are_reproducible_keyed_and_nearly_ordered() -> None:
    views = list(islice(page_views(seed=7, start_ms=1_000_000, rate_per_s=10), 500))
    assert views == list(islice(page_views(seed=7, start_ms=1_000_000, rate_per_s=10), 500))
    assert all(PageView.decode(v.encode()) == v and v.key() == v.user_id.encode() for v in views)
    for n, view in enumerate(views):
        clock = 1_000_000 + n * 100
        assert clock - MAX_DISORDER_MS < view.event_time_ms <= clock
    pages = [v.page for v in views]
    assert pages.count("/") > pages.count("/blog/10")  # Zipf-like popularity


def test_metric_samples_cover_every_host_and_metric() -> None:
    samples = list(islice(metric_samples(seed=1, start_ms=0, rate_per_s=4, hosts=3), 120))
    assert {(s.host, s.metric) for s in samples} == {
        (f"host-{h:03d}", m)
        for h in range(3)
        for m in ("cpu.percent", "memory.percent", "disk.io.mbps", "net.rx.mbps")
    }
    assert all(MetricSample.decode(s.encode()) == s and -5 <= s.value <= 105 for s in samples)
