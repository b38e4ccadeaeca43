"""Fixtures shared by the unit tests of several packages."""

from __future__ import annotations

import contextlib
import resource
import signal
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest


@contextlib.contextmanager
def _file_size_limit(limit: int) -> Iterator[None]:
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, old_limit[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)


@pytest.fixture
def file_size_limit() -> Callable[[int], AbstractContextManager[None]]:
    """``file_size_limit(n)``: a context in which writes past ``n`` bytes of any file fail
    with EFBIG after writing what fits, as a full disk fails them with ENOSPC (SIGXFSZ
    ignored)."""
    return _file_size_limit
