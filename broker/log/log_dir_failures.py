"""Log directories taken offline by an I/O error (Kafka's LogDirFailureChannel).

The first ``OSError`` in a log directory (a full disk, EIO) takes the whole directory
offline until the broker restarts: every partition in it then answers
KAFKA_STORAGE_ERROR, and nothing more is written there. The failure is logged once,
naming the directory and the cause, and reported to the listeners (the broker halts when
no directory is left). ``in_log_dir`` guards the methods of a log that touch its files.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ..protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

FailureListener = Callable[[Path], object]


class LogDirFailures:
    """The offline log directories of one broker, with the cause of each."""

    def __init__(self) -> None:
        self._offline: dict[Path, str] = {}
        self._listeners: list[FailureListener] = []
        self._lock = threading.Lock()  # checkpoints fail on the maintenance thread

    def on_failure(self, listener: FailureListener) -> None:
        """Call ``listener(log_dir)`` once per directory that goes offline, on the thread
        that hit the error."""
        self._listeners.append(listener)

    @property
    def offline(self) -> dict[Path, str]:
        """Offline directory -> the cause, as first logged."""
        return dict(self._offline)

    @property
    def any_offline(self) -> bool:
        return bool(self._offline)

    def is_offline(self, log_dir: Path) -> bool:
        return log_dir in self._offline

    def check(self, log_dir: Path) -> None:
        """KAFKA_STORAGE_ERROR if ``log_dir`` is offline."""
        cause = self._offline.get(log_dir)
        if cause is not None:
            raise KafkaError(
                ErrorCode.kafka_storage_error, f"log directory {log_dir} is offline: {cause}"
            )

    def fail(self, log_dir: Path, action: str, error: OSError) -> KafkaError:
        """Take ``log_dir`` offline after ``error`` while ``action`` (logged the first
        time only); returns the KAFKA_STORAGE_ERROR to raise."""
        cause = f"{action} failed: {error.strerror or error}"
        with self._lock:
            first = log_dir not in self._offline
            if first:
                self._offline[log_dir] = cause
        if first:
            logger.error(
                "log directory %s is offline: %s; its partitions answer KAFKA_STORAGE_ERROR "
                "until the broker restarts with the disk repaired",
                log_dir,
                cause,
            )
            for listener in self._listeners:
                listener(log_dir)
        return KafkaError(
            ErrorCode.kafka_storage_error,
            f"log directory {log_dir} is offline: {self._offline[log_dir]}",
        )


class InLogDir(Protocol):
    """Something kept in a directory of a log directory (a partition log)."""

    directory: Path
    failures: LogDirFailures


_L = TypeVar("_L", bound=InLogDir)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def in_log_dir(
    action: str,
) -> Callable[[Callable[Concatenate[_L, _P], _R]], Callable[Concatenate[_L, _P], _R]]:
    """A method decorator: KAFKA_STORAGE_ERROR while the log directory (the parent of
    ``directory``) is offline, and the directory taken offline on an ``OSError``
    (``action`` and the directory's name say what failed in the one log line)."""

    def wrap(method: Callable[Concatenate[_L, _P], _R]) -> Callable[Concatenate[_L, _P], _R]:
        @functools.wraps(method)
        def guarded(owner: _L, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            if owner.failures.any_offline:  # on every read and append: no path work else
                owner.failures.check(owner.directory.parent)
            try:
                return method(owner, *args, **kwargs)
            except OSError as error:
                where = f"{action} {owner.directory.name}"
                raise owner.failures.fail(owner.directory.parent, where, error) from error

        return guarded

    return wrap
