"""A thin asyncio client for etcd v3 over its JSON gateway (aiohttp).

etcd serves gRPC and, on the same port, a JSON translation of it under /v3/.
Odradek needs only ranges, puts, deletes, transactions (compare-and-set),
leases and watches, which the gateway covers; speaking it with aiohttp (already
the broker's HTTP library) avoids a gRPC stack and a client library that lags
etcd. Keys and values are base64 in the JSON, and 64-bit numbers are strings.
https endpoints use the TLS context ``tls`` gives (asked on every call, so a
certificate replaced on disk serves the next connection).
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

log = logging.getLogger(__name__)
# gRPC codes of a member that cannot serve now (no leader, no quorum in time), whose
# request another member may serve: DEADLINE_EXCEEDED, UNAVAILABLE.
MEMBER_UNAVAILABLE = frozenset({4, 14})


class EtcdError(Exception):
    """etcd could not be reached or refused a request."""


class WatchCompacted(EtcdError):
    """A watch asked for revisions etcd has compacted away: read the whole prefix again."""


@dataclass(frozen=True)
class KeyValue:
    key: str
    value: bytes
    create_revision: int
    mod_revision: int
    lease: int = 0


@dataclass(frozen=True)
class WatchEvent:
    deleted: bool
    kv: KeyValue


@dataclass(frozen=True)
class Compare:
    """One condition of a transaction: ``target`` of ``key`` compared with ``value``."""

    key: str
    target: str  # "CREATE", "MOD", "VERSION", "VALUE" or "LEASE"
    value: int | bytes
    result: str = "EQUAL"

    def to_json(self) -> dict[str, Any]:
        field = {"CREATE": "create_revision", "MOD": "mod_revision", "VERSION": "version",
                 "VALUE": "value", "LEASE": "lease"}[self.target]  # fmt: skip
        value = _b64(self.value) if isinstance(self.value, bytes) else str(self.value)
        return {"key": _b64(self.key), "target": self.target, "result": self.result, field: value}


def key_absent(key: str) -> Compare:
    return Compare(key, "CREATE", 0)


def unchanged_since(key: str, mod_revision: int) -> Compare:
    return Compare(key, "MOD", mod_revision)


def put_op(key: str, value: bytes, lease: int = 0) -> dict[str, Any]:
    request: dict[str, Any] = {"key": _b64(key), "value": _b64(value)}
    if lease:
        request["lease"] = str(lease)
    return {"request_put": request}


def delete_op(key: str, prefix: bool = False) -> dict[str, Any]:
    request = {"key": _b64(key)}
    if prefix:
        request["range_end"] = _b64(_prefix_end(key))
    return {"request_delete_range": request}


class EtcdClient:
    def __init__(
        self,
        endpoints: Sequence[str],
        timeout: float = 5.0,
        tls: Callable[[], ssl.SSLContext] | None = None,
    ) -> None:
        if not endpoints:
            raise ValueError("etcd needs at least one endpoint")
        self._endpoints = [e if "://" in e else f"http://{e}" for e in endpoints]
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._tls = tls

    def _ssl(self) -> ssl.SSLContext | bool:
        """aiohttp's ``ssl``: our context, or True (its default checks) without one."""
        return self._tls() if self._tls is not None else True

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def get(self, key: str) -> KeyValue | None:
        reply = await self._call("/v3/kv/range", {"key": _b64(key)})
        kvs = reply.get("kvs", [])
        return _kv(kvs[0]) if kvs else None

    async def get_prefix(self, prefix: str) -> tuple[int, list[KeyValue]]:
        """(revision, every key under ``prefix``) in one consistent read."""
        reply = await self._call(
            "/v3/kv/range", {"key": _b64(prefix), "range_end": _b64(_prefix_end(prefix))}
        )
        return int(reply["header"]["revision"]), [_kv(item) for item in reply.get("kvs", [])]

    async def put(self, key: str, value: bytes, lease: int = 0) -> int:
        reply = await self._call("/v3/kv/put", put_op(key, value, lease)["request_put"])
        return int(reply["header"]["revision"])

    async def delete(self, key: str, prefix: bool = False) -> None:
        await self._call("/v3/kv/deleterange", delete_op(key, prefix)["request_delete_range"])

    async def txn(
        self,
        compares: Sequence[Compare],
        success: Sequence[dict[str, Any]],
        failure: Sequence[dict[str, Any]] = (),
    ) -> bool:
        """Run ``success`` if every compare holds, else ``failure``; True if it held."""
        reply = await self._call(
            "/v3/kv/txn",
            {
                "compare": [compare.to_json() for compare in compares],
                "success": list(success),
                "failure": list(failure),
            },
        )
        return bool(reply.get("succeeded", False))

    async def grant_lease(self, ttl_seconds: int) -> int:
        reply = await self._call("/v3/lease/grant", {"TTL": str(ttl_seconds)})
        return int(reply["ID"])

    async def keep_alive(self, lease: int, timeout: float | None = None) -> int:
        """Refresh ``lease`` (``timeout`` seconds per endpoint); returns its TTL in seconds,
        0 if it has expired."""
        reply = await self._call("/v3/lease/keepalive", {"ID": str(lease)}, timeout)
        return int(reply.get("result", {}).get("TTL", 0))

    async def revoke(self, lease: int) -> None:
        await self._call("/v3/lease/revoke", {"ID": str(lease)})

    async def prefix_summary(self, prefix: str, timeout: float) -> tuple[int, int]:
        """(how many keys are under ``prefix``, the highest mod revision among them): one
        consistent read that tells whether a watch of the prefix has missed a change."""
        reply = await self._call(
            "/v3/kv/range",
            {
                "key": _b64(prefix),
                "range_end": _b64(_prefix_end(prefix)),
                "limit": "1",
                "sort_order": "DESCEND",
                "sort_target": "MOD",
                "keys_only": True,
            },
            timeout,
        )
        latest = [_kv(item).mod_revision for item in reply.get("kvs", [])]
        return int(reply.get("count", 0)), max(latest, default=0)

    @property
    def preferred_endpoint(self) -> str:
        """The endpoint tried first: the last one that answered."""
        return self._endpoints[0]

    def demote(self, endpoint: str) -> None:
        """Try ``endpoint`` last from now on (it failed, or its watch went silent)."""
        if endpoint in self._endpoints and len(self._endpoints) > 1:
            self._endpoints.remove(endpoint)
            self._endpoints.append(endpoint)

    async def watch_prefix(
        self, prefix: str, start_revision: int, endpoint: str
    ) -> AsyncIterator[list[WatchEvent]]:
        """Changes under ``prefix`` from ``start_revision`` on, as ``endpoint`` streams them,
        until the stream breaks; the events of one transaction arrive together. A member
        cut off from its quorum keeps such a stream open and silent: callers check it
        against ``prefix_summary``."""
        request = {
            "create_request": {
                "key": _b64(prefix),
                "range_end": _b64(_prefix_end(prefix)),
                "start_revision": str(start_revision),
            }
        }
        session = self._ensure_session()
        try:
            async with session.post(
                endpoint + "/v3/watch",
                json=request,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._timeout.total),
                ssl=self._ssl(),
            ) as response:
                async for line in response.content:
                    if not line.strip():
                        continue
                    result = json.loads(line).get("result", {})
                    if result.get("canceled"):
                        reason = f"watch canceled: {result.get('cancel_reason', '')}"
                        if int(result.get("compact_revision", 0)):
                            raise WatchCompacted(reason)
                        raise EtcdError(reason)
                    events = result.get("events", [])
                    if events:
                        yield [WatchEvent(e.get("type") == "DELETE", _kv(e["kv"])) for e in events]
        except (aiohttp.ClientError, OSError, ValueError) as error:
            raise EtcdError(f"watch of {prefix} at {endpoint} broke: {error}") from error

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    async def _call(
        self, path: str, body: dict[str, Any], timeout: float | None = None
    ) -> dict[str, Any]:
        """``body`` to the first endpoint that answers, each given ``timeout`` seconds (the
        client's timeout by default); an endpoint that fails is tried last from then on,
        so a dead, paused or cut-off member costs one timeout, not one per call."""
        session = self._ensure_session()
        attempt = aiohttp.ClientTimeout(total=timeout) if timeout is not None else self._timeout
        last_error: Exception | None = None
        for endpoint in list(self._endpoints):
            try:
                async with session.post(
                    endpoint + path, json=body, ssl=self._ssl(), timeout=attempt
                ) as response:
                    reply: dict[str, Any] = await response.json(content_type=None)
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError) as error:
                last_error = error
                self.demote(endpoint)
                continue
            if response.status == 200 and "error" not in reply:
                return reply
            last_error = EtcdError(f"etcd {path}: {reply.get('error', response.status)}")
            if reply.get("code") not in MEMBER_UNAVAILABLE:
                raise last_error  # refused on its merits: every member would refuse it
            self.demote(endpoint)
        raise EtcdError(f"no etcd endpoint answered {path}: {last_error}")


def _b64(value: str | bytes) -> str:
    raw = value.encode() if isinstance(value, str) else value
    return base64.b64encode(raw).decode()


def _prefix_end(prefix: str) -> bytes:
    raw = bytearray(prefix.encode())
    raw[-1] += 1  # the smallest key greater than every key with this prefix
    return bytes(raw)


def _kv(item: dict[str, Any]) -> KeyValue:
    return KeyValue(
        key=base64.b64decode(item["key"]).decode(),
        value=base64.b64decode(item.get("value", "")),
        create_revision=int(item.get("create_revision", 0)),
        mod_revision=int(item.get("mod_revision", 0)),
        lease=int(item.get("lease", 0)),
    )
