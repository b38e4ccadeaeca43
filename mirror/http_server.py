"""/healthz, /readyz and /metrics of a mirror process (aiohttp)."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

Check = Callable[[], str | None]
"""Returns None when fine, else the reason as a sentence."""


def _verdict(check: Check) -> web.Response:
    reason = check()
    if reason is None:
        return web.Response(text="ok\n")
    return web.Response(status=503, text=f"{reason}\n")


def mirror_http_app(registry: CollectorRegistry, alive: Check, ready: Check) -> web.Application:
    """healthz: the pipeline threads run; readyz: target topics synced and the reader subscribed."""

    async def metrics(request: web.Request) -> web.Response:
        body = generate_latest(registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(request: web.Request) -> web.Response:
        return _verdict(alive)

    async def readyz(request: web.Request) -> web.Response:
        return _verdict(ready)

    app = web.Application()
    app.add_routes(
        [web.get("/metrics", metrics), web.get("/healthz", healthz), web.get("/readyz", readyz)]
    )
    return app


async def start_http(app: web.Application, host: str, port: int) -> web.AppRunner:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
