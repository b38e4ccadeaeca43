"""A log directory's lasting identity, like ``directory.id`` in Kafka's meta.properties."""

from __future__ import annotations

import uuid
from pathlib import Path

from odradek.broker.log.file_io import write_atomically

META_PROPERTIES = "meta.properties"
KEY = "directory.id"


def directory_id(log_dir: Path) -> str:
    """The id recorded in ``log_dir``; the first call records a new one durably."""
    path = log_dir / META_PROPERTIES
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == KEY and value.strip():
                return value.strip()
    new_id = uuid.uuid4().hex
    write_atomically(path, f"{KEY}={new_id}\n".encode())
    return new_id
