"""The partition log: segments, indexes, checkpoints, recovery and producer state.

Knows nothing of the network server or the cluster; the server and the
replication code call ``LogManager`` and ``PartitionLog``.
"""

from __future__ import annotations

from .log_cleaner import CleanerStats, LogCleaner
from .log_config import LogConfig
from .log_manager import LogManager
from .partition_log import AppendInfo, FileRegion, PartitionLog, ReadResult

__all__ = [
    "AppendInfo",
    "CleanerStats",
    "FileRegion",
    "LogCleaner",
    "LogConfig",
    "LogManager",
    "PartitionLog",
    "ReadResult",
]
