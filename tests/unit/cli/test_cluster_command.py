"""The pure parts of ``odradek cluster``: broker layout, defaults, argument parsing, report."""

from __future__ import annotations

from pathlib import Path

import pytest

from odradek.cli.cluster_state import BrokerInfo, ClusterState, PartitionInfo, format_state
from odradek.cli.local_cluster import cluster_defaults, plan_brokers
from odradek.cli.main import build_parser
from odradek.cli.text_table import format_table


def test_brokers_get_racks_round_robin_and_ports_from_the_base_port() -> None:
    specs = plan_brokers(4, Path("/d"), racks=("a", "b", "c"), base_port=19092)
    assert [s.rack for s in specs] == ["a", "b", "c", "a"]
    assert [(s.port, s.http_port) for s in specs] == [(19092 + i, 19192 + i) for i in range(4)]
    assert [s.data_dir for s in specs] == [Path(f"/d/broker-{i}") for i in range(4)]
    assert specs[3].settings("http://127.0.0.1:1")["broker.rack"] == "a"


def test_brokers_without_racks_or_base_port_get_distinct_free_ports_and_no_rack() -> None:
    specs = plan_brokers(3, Path("/d"))
    ports = [port for s in specs for port in (s.port, s.http_port)]
    assert len(set(ports)) == len(ports)
    assert all("broker.rack" not in s.settings("http://127.0.0.1:1") for s in specs)


@pytest.mark.parametrize(("brokers", "factor"), [(1, "1"), (2, "2"), (3, "3"), (6, "3")])
def test_local_clusters_replicate_three_times_or_on_every_broker(brokers: int, factor: str) -> None:
    assert cluster_defaults(brokers) == {
        "default.replication.factor": factor,
        "offsets.topic.replication.factor": factor,
    }


def test_up_parses_racks_and_refuses_empty_rack_names_and_zero_brokers() -> None:
    parser = build_parser()
    args = parser.parse_args(["cluster", "up", "--brokers", "6", "--racks", "a, b,c"])
    assert (args.brokers, args.racks) == (6, ("a", "b", "c"))
    for bad in (["--racks", "a,,c"], ["--brokers", "0"], ["--base-port", "80"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["cluster", "up", *bad])


def test_status_lists_brokers_controller_and_unhealthy_partitions() -> None:
    state = ClusterState(
        "cid",
        1,
        (BrokerInfo(0, "127.0.0.1", 9092, "a"), BrokerInfo(1, "127.0.0.1", 9093, None)),
        (
            PartitionInfo("orders", 0, 0, (0, 1, 2), (0, 1)),
            PartitionInfo("orders", 1, -1, (2, 0, 1), (2,)),
            PartitionInfo("orders", 2, 1, (1, 0), (1, 0)),
        ),
    )
    assert format_state(state) == [
        "Cluster cid: 2 broker(s), controller 1, 3 partition(s)",
        "",
        "ID ADDRESS        RACK LEADERS CONTROLLER",
        "0  127.0.0.1:9092 a    1",
        "1  127.0.0.1:9093 -    1       yes",
        "",
        "Offline partitions: 1",
        "TOPIC  PARTITION LEADER REPLICAS ISR",
        "orders 1         none   2,0,1    2",
        "",
        "Under-replicated partitions: 1",
        "TOPIC  PARTITION LEADER REPLICAS ISR",
        "orders 0         0      0,1,2    0,1",
    ]


def test_tables_pad_columns_to_the_widest_cell() -> None:
    assert format_table(("A", "LONG"), [(1, "x"), ("wide", "")]) == ["A    LONG", "1    x", "wide"]
