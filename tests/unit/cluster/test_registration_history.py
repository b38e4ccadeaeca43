"""A registration etcd ended while its broker ran on is continued, a restart's is not."""

from __future__ import annotations

from dataclasses import replace

from odradek.broker.cluster.metadata_image import BrokerRegistration, MetadataImage
from odradek.broker.cluster.registration_history import RegistrationHistory


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def image(*registrations: BrokerRegistration, unfenced: dict[int, int]) -> MetadataImage:
    return MetadataImage("c", 0, {r.node_id: r for r in registrations}, {}, unfenced=unfenced)


RUNNING = BrokerRegistration(1, "h", 9092, epoch=10, incarnation="run-a")
BEFORE = image(RUNNING, unfenced={1: 10})
VANISHED = image(unfenced={1: 10})


def test_a_vanished_registration_is_awaited_for_the_grace_only() -> None:
    clock = Clock()
    history = RegistrationHistory(grace_s=1.0, clock=clock)
    history.observe(image(unfenced={}), BEFORE)
    history.observe(BEFORE, VANISHED)
    assert history.awaited() == {1}
    clock.now += 1.0
    assert history.awaited() == set()


def test_the_same_run_registering_again_continues_a_restart_does_not() -> None:
    history = RegistrationHistory(clock=Clock())
    history.observe(image(unfenced={}), BEFORE)
    history.observe(BEFORE, VANISHED)
    again = image(replace(RUNNING, epoch=12), unfenced={1: 10})
    history.observe(VANISHED, again)
    assert history.awaited() == set(), "registered again: no longer awaited"
    assert history.continuing(again, {1}) == {1}
    restarted = image(replace(RUNNING, epoch=12, incarnation="run-b"), unfenced={1: 10})
    assert history.continuing(restarted, {1}) == set()


def test_only_an_unfenced_registration_sets_the_run_to_continue() -> None:
    history = RegistrationHistory(clock=Clock())
    never_unfenced = image(RUNNING, unfenced={})
    history.observe(image(unfenced={}), never_unfenced)
    assert history.continuing(never_unfenced, {1}) == set()
