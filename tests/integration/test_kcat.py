"""kcat (the Debian package) lists metadata and consumes (issue 2, point 1)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from broker_process import Broker, unique_name
from kafka_clients import ConfluentClient, OutRecord
from kafka_wire import WireClient

KCAT = shutil.which("kcat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed (apt install kcat)")

RECORDS = [
    OutRecord(b"alpha", b"first value", (("trace", b"t-1"), ("origin", b"confluent"))),
    OutRecord(b"beta", b"second value", ()),
    OutRecord(None, b"keyless value", (("only", b"header"),)),
    OutRecord(b"gamma", "third ☃".encode(), (("dup", b"1"), ("dup", b"2"))),
]


def kcat(broker: Broker, *args: str, timeout: float = 30.0) -> str:
    assert KCAT is not None
    completed = subprocess.run(
        [KCAT, "-b", broker.bootstrap, "-m", "10", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert completed.returncode == 0, (
        f"kcat {' '.join(args)} exited {completed.returncode}\n"
        f"stdout: {completed.stdout}\nstderr: {completed.stderr}"
    )
    return completed.stdout


@pytest.fixture(scope="module")
def topic(broker: Broker) -> str:
    """A 2-partition topic holding ``RECORDS`` in partition 0, produced by confluent-kafka."""
    name = unique_name("kcat")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=True)
    ConfluentClient().produce(broker.bootstrap, name, 0, RECORDS)
    return name


def test_kcat_lists_metadata_with_broker_and_topic(broker: Broker, topic: str) -> None:
    listing = kcat(broker, "-L")
    assert "1 brokers:" in listing, listing
    assert f"at {broker.bootstrap}" in listing, listing
    assert f'topic "{topic}" with 1 partitions:' in listing, listing
    assert "partition 0, leader" in listing, listing


def test_kcat_lists_metadata_as_json(broker: Broker, topic: str) -> None:
    metadata: dict[str, Any] = json.loads(kcat(broker, "-J", "-L"))
    assert [b["name"] for b in metadata["brokers"]] == [broker.bootstrap]
    broker_id = metadata["brokers"][0]["id"]
    (described,) = [t for t in metadata["topics"] if t["topic"] == topic]
    (partition,) = described["partitions"]
    assert partition["partition"] == 0
    assert partition["leader"] == broker_id
    assert [r["id"] for r in partition["replicas"]] == [broker_id]
    assert [r["id"] for r in partition["isrs"]] == [broker_id]


def test_kcat_consumes_records_with_keys_and_headers(broker: Broker, topic: str) -> None:
    output = kcat(broker, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J", "-q")
    messages = [json.loads(line) for line in output.splitlines() if line.strip()]
    assert [m["offset"] for m in messages] == list(range(len(RECORDS)))
    for sent, got in zip(RECORDS, messages, strict=True):
        assert got["key"] == (sent.key.decode() if sent.key is not None else None)
        assert got["payload"] == (sent.value or b"").decode()
        flat_headers = [part for key, value in sent.headers for part in (key, value.decode())]
        assert got.get("headers", []) == flat_headers
        assert got["tstype"] == "create"


def test_kcat_formats_records_with_its_format_string(broker: Broker, topic: str) -> None:
    output = kcat(
        broker, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
        "-f", "%o|%k|%s|%h\n",
    )  # fmt: skip
    lines = output.splitlines()
    assert lines[0] == "0|alpha|first value|trace=t-1,origin=confluent"
    assert lines[1] == "1|beta|second value|"
    assert len(lines) == len(RECORDS)
