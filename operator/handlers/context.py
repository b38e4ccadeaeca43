"""What handlers are given at startup: the API clients and the clock."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .kafka_admin import AdminFactory
from .kube import Kube

Log = logging.Logger | logging.LoggerAdapter[Any]
"""kopf hands handlers either."""


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Context:
    kube: Kube
    admin: AdminFactory
    now: Callable[[], datetime] = field(default=utc_now)
    out_of_cluster: bool = False
    """Honour Clusters' admin-bootstrap-servers annotation (constants.OUT_OF_CLUSTER_ENV)."""

    def timestamp(self) -> str:
        return self.now().strftime("%Y-%m-%dT%H:%M:%SZ")
