"""Odradek brokers under cProfile with a CPU-time clock: where a benchmark's broker CPU goes.

Inside ``profiled_brokers(directory)``, every ``odradek broker`` process started (it
inherits the environment) profiles its event loop's thread from start to exit and writes
``<directory>/broker-<pid>.prof`` as it exits (a clean stop, as the benchmarks' are).
``top_functions`` lists, over all of them, the functions with the most CPU time
including what they call. A CPU clock is not skewed by other processes on a busy machine,
as wall-clock samples are (a process waiting for a CPU is sampled wherever it stopped);
cProfile's own cost per call does inflate functions called very often, and it slows the
brokers several times, so profile runs measure nothing else.
"""

from __future__ import annotations

import io
import os
import pstats
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

OUTPUT_ENV = "BENCH_CPROFILE_DIR"
_SITECUSTOMIZE = f'''
import os, sys
if sys.argv[1:2] == ["broker"] and os.environ.get("{OUTPUT_ENV}"):
    import atexit, cProfile, time
    _profile = cProfile.Profile(time.process_time)
    _profile.enable()

    def _write():
        _profile.disable()
        name = f"broker-{{os.getpid()}}.prof"
        _profile.dump_stats(os.path.join(os.environ["{OUTPUT_ENV}"], name))

    atexit.register(_write)
'''


@contextmanager
def profiled_brokers(directory: Path) -> Iterator[Path]:
    """Profile the brokers started inside the block into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", OUTPUT_ENV)}
    with tempfile.TemporaryDirectory(prefix="bench-cprofile-") as hook:
        Path(hook, "sitecustomize.py").write_text(_SITECUSTOMIZE)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [hook, saved["PYTHONPATH"]]))
        os.environ[OUTPUT_ENV] = str(directory)
        try:
            yield directory
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def top_functions(directory: Path, count: int = 40) -> str:
    """The ``count`` functions of Odradek, kio and asyncio with the most CPU time including
    callees, over every profile in ``directory``."""
    profiles = sorted(str(path) for path in directory.glob("broker-*.prof"))
    if not profiles:
        return f"no profiles in {directory} (did the brokers stop cleanly?)"
    out = io.StringIO()
    stats = pstats.Stats(*profiles, stream=out)
    stats.sort_stats("cumulative").print_stats(r"odradek|kio|asyncio", count)
    return out.getvalue()
