"""A wall clock that never steps: what measures durations where a timestamp is also kept.

``steady_clock()`` reads like ``time.time`` but moves only as the monotonic clock does,
from the wall time when it was made. A stepped system clock (NTP, an operator's
``date``) then neither fires nor delays timeouts, rolls or deadlines kept as
timestamps, while they stay close to wall time for logs and metrics. Its timestamps
differ from the wall clock by any step since it was made.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def steady_clock(
    wall: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic
) -> Callable[[], float]:
    """Seconds since the epoch as ``wall`` read now, advanced by ``monotonic`` since."""
    offset = wall() - monotonic()
    return lambda: offset + monotonic()
