"""Page-view events, as a website's activity tracking would send them (no pyspark here).

Events are keyed by user id, so one user's views stay in order in one partition.
Pages are drawn Zipf-like (a few pages get most views), users arrive in
sessions, and event times drift a little out of order, as they do when clients
buffer events before sending them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass

PAGES = (
    "/",
    "/search",
    "/cart",
    "/checkout",
    "/account",
    "/help",
    *(f"/products/{n}" for n in range(1, 41)),
    *(f"/blog/{n}" for n in range(1, 11)),
)
REFERRERS = (None, None, "https://www.example.com/", "https://news.example.org/", "email")
MAX_DISORDER_MS = 2_000
"""How far an event's time may lag the generator's clock (well under any watermark)."""


@dataclass(frozen=True)
class PageView:
    user_id: str
    session_id: str
    page: str
    referrer: str | None
    event_time_ms: int

    def key(self) -> bytes:
        return self.user_id.encode()

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def decode(cls, value: bytes) -> PageView:
        return cls(**json.loads(value))


def page_views(seed: int, start_ms: int, rate_per_s: float, users: int = 500) -> Iterator[PageView]:
    """An endless, reproducible stream of page views, ``rate_per_s`` per second of event time."""
    rng = random.Random(seed)
    weights = [1 / rank for rank in range(1, len(PAGES) + 1)]
    sessions: dict[str, str] = {}
    step_ms = 1000 / rate_per_s
    for n in range(2**63):
        user = f"user-{rng.randrange(users):04d}"
        if user not in sessions or rng.random() < 0.05:
            sessions[user] = f"{user}-s{n}"
        clock_ms = start_ms + int(n * step_ms)
        yield PageView(
            user_id=user,
            session_id=sessions[user],
            page=rng.choices(PAGES, weights)[0],
            referrer=rng.choice(REFERRERS),
            event_time_ms=max(start_ms, clock_ms - rng.randrange(MAX_DISORDER_MS)),
        )
