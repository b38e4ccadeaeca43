"""A 3-member etcd for the fault tests: the members form one cluster, and losing its
leader elects another within a second while the survivors keep serving."""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from pathlib import Path

import pytest

from odradek.cli.etcd_process import EtcdCluster


def call(endpoint: str, path: str, body: dict[str, str]) -> dict[str, object]:
    request = urllib.request.Request(
        f"{endpoint}/v3/kv/{path}", data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=3) as response:
        answer: dict[str, object] = json.load(response)
        return answer


def put(endpoint: str, key: str, value: str) -> None:
    call(endpoint, "put", {"key": b64(key), "value": b64(value)})


def get(endpoint: str, key: str) -> list[str]:
    kvs = call(endpoint, "range", {"key": b64(key)}).get("kvs", [])
    return [base64.b64decode(kv["value"]).decode() for kv in kvs]  # type: ignore[attr-defined, index]


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_three_members_serve_one_store_and_elect_a_new_leader(tmp_path: Path) -> None:
    cluster = EtcdCluster(tmp_path / "etcd").start()
    try:
        put(cluster.endpoints[0], "k", "first")
        assert get(cluster.endpoints[2], "k") == ["first"]
        leader = cluster.leader()
        assert leader is not None
        cluster.members[leader].kill()
        lost = time.monotonic()
        deadline = lost + 10
        while cluster.leader() in (None, leader):
            if time.monotonic() > deadline:
                pytest.fail("no new etcd leader within 10 s")
            time.sleep(0.05)
        assert time.monotonic() - lost < 3
        survivors = [m.endpoint for i, m in enumerate(cluster.members) if i != leader]
        put(survivors[0], "k", "second")
        assert get(survivors[1], "k") == ["second"]
    finally:
        cluster.kill()
