"""What the controller remembers of broker registrations across image changes.

etcd can end a session while its broker runs on: an etcd leader that stalls and resumes
revokes every lease that expired by its own clock, even after the other members elected
a new leader and kept the leases alive (etcd-io/etcd#15247; etcd 3.6 still does so after
a whole-process pause). The broker then registers again at once. Such a registration is
of the same process run (its ``incarnation``), whose logs never stopped, so the
controller continues it instead of replacing it: the broker counts as live for a short
grace after its registration vanished, and its new registration is unfenced without
first taking away what it leads. A broker that restarted has a new incarnation and is
fenced and emptied of its leaderships as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from odradek.broker.cluster.metadata_image import MetadataImage

# How long a vanished registration still counts as live, waiting for its broker to
# register again (the broker notices within a round trip or two).
REREGISTRATION_GRACE_S = 1.0


class RegistrationHistory:
    def __init__(
        self,
        grace_s: float = REREGISTRATION_GRACE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._grace_s = grace_s
        self._clock = clock
        self._incarnations: dict[int, str] = {}  # of each broker's last unfenced registration
        self._vanished_at: dict[int, float] = {}

    def observe(self, old: MetadataImage, new: MetadataImage) -> None:
        """Remember unfenced registrations' incarnations and when registrations vanished."""
        for node, registration in new.brokers.items():
            self._vanished_at.pop(node, None)
            if registration.incarnation and new.unfenced.get(node) == registration.epoch:
                self._incarnations[node] = registration.incarnation
        now = self._clock()
        for node in old.brokers.keys() - new.brokers.keys():
            self._vanished_at[node] = now

    def awaited(self) -> set[int]:
        """Brokers whose registration vanished less than the grace ago."""
        now = self._clock()
        return {node for node, at in self._vanished_at.items() if now - at < self._grace_s}

    def continuing(self, image: MetadataImage, fenced: Collection[int]) -> set[int]:
        """The ``fenced`` registrations of a process run that was unfenced before."""
        return {
            node
            for node in fenced
            if (registration := image.brokers.get(node)) is not None
            and registration.incarnation
            and self._incarnations.get(node) == registration.incarnation
        }
