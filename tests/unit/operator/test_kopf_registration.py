from __future__ import annotations

import kopf

from odradek.operator import main  # noqa: F401  (registers the handlers)


def handlers() -> list[object]:
    registry = kopf.get_default_registry()
    return [
        *registry._changing.get_all_handlers(),
        *registry._spawning.get_all_handlers(),
    ]


def test_every_resource_has_create_update_and_resume_handlers() -> None:
    plurals = {h.selector.plural for h in kopf.get_default_registry()._changing.get_all_handlers()}
    assert {"clusters", "topics", "mirrormakers", "users"} <= plurals


def test_no_timers_or_daemons_that_would_put_finalizers_on_every_resource() -> None:
    assert not list(kopf.get_default_registry()._spawning.get_all_handlers())


def test_only_topic_and_user_deletion_can_hold_a_finalizer() -> None:
    holding = [h for h in handlers() if getattr(h, "requires_finalizer", False)]
    plurals = sorted(h.selector.plural for h in holding)  # type: ignore[attr-defined]
    assert plurals == ["topics", "users"]
