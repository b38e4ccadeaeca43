"""The coordinator over real partition logs (no sockets): offset rules, admin APIs, reloading."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from group_testing import group_config, subscription
from one_broker import one_broker

from odradek.broker.group.coordinator import GroupCoordinator, OffsetToCommit
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.rebalance import JoinRequest, SyncRequest
from odradek.broker.protocol.errors import ErrorCode, KafkaError

TOPIC = "orders"


@asynccontextmanager
async def running(data_dir: Path, **config: int) -> AsyncIterator[GroupCoordinator]:
    """A coordinator of one broker on ``data_dir``, its offsets partitions loaded."""
    async with one_broker(data_dir, TOPIC) as broker:
        coordinator = GroupCoordinator(group_config(offsets_topic_partitions=3, **config),
                                       broker.store, broker.replicas, lambda: 1)  # fmt: skip
        coordinator.start()
        await coordinator.find_coordinator("any")
        while coordinator.catalog.loading:
            await asyncio.sleep(0.001)
        try:
            yield coordinator
        finally:
            await coordinator.stop()


def run(test: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(*args), 10))


def _offsets(*values: int) -> dict[tuple[str, int], OffsetToCommit]:
    return {(TOPIC, index): OffsetToCommit(value, 0, "m") for index, value in enumerate(values)}


async def _member(coordinator: GroupCoordinator, group: str) -> tuple[str, int]:
    """The only member of a Stable group: (member id, generation)."""
    request = JoinRequest("", None, "c", "", 1000, 1000, "consumer",
                          (("range", subscription(TOPIC)),), False)  # fmt: skip
    joined = await coordinator.join(group, request)
    assert joined.error is ErrorCode.none
    sync = SyncRequest(joined.member_id, None, joined.generation, None, None, {})
    assert (await coordinator.sync(group, sync)).error is ErrorCode.none
    return joined.member_id, joined.generation


def test_standalone_commits_survive_a_new_coordinator_reading_the_log(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            results = await coordinator.commit_offsets("solo", -1, "", None, _offsets(5, 7))
            assert set(results.values()) == {ErrorCode.none}
            await coordinator.commit_offsets("solo", -1, "", None, _offsets(6))
            assert coordinator.offset_commits == 3
        async with running(tmp_path) as reloaded:
            found = reloaded.fetch_offsets("solo", [(TOPIC, 0), (TOPIC, 1), ("other", 0)])
            assert {key: o.offset if o else None for key, o in found.items()} == {
                (TOPIC, 0): 6,
                (TOPIC, 1): 7,
                ("other", 0): None,
            }

    run(test)


def test_commits_are_checked_against_the_group(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            unknown = await coordinator.commit_offsets("new", 3, "m", None, _offsets(1))
            assert set(unknown.values()) == {ErrorCode.illegal_generation}
            member_id, generation = await _member(coordinator, "active")
            codes = {
                "standalone": await coordinator.commit_offsets("active", -1, "", None, _offsets(1)),
                "stale": await coordinator.commit_offsets(
                    "active", generation - 1, member_id, None, _offsets(1)
                ),
                "member": await coordinator.commit_offsets(
                    "active", generation, member_id, None, _offsets(1)
                ),
                "no topic": await coordinator.commit_offsets(
                    "active", generation, member_id, None, {("nope", 0): OffsetToCommit(1, 0, "")}
                ),
            }
            assert {name: set(result.values()) for name, result in codes.items()} == {
                "standalone": {ErrorCode.unknown_member_id},
                "stale": {ErrorCode.illegal_generation},
                "member": {ErrorCode.none},
                "no topic": {ErrorCode.unknown_topic_or_partition},
            }

    run(test)


def test_a_member_may_commit_while_its_group_prepares_to_rebalance(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            member_id, generation = await _member(coordinator, "g")
            group = coordinator.describe("g")
            assert group is not None
            coordinator.rebalancer.prepare_rebalance(group, "test")
            result = await coordinator.commit_offsets("g", generation, member_id, None, _offsets(4))
            assert set(result.values()) == {ErrorCode.none}

    run(test)


def test_groups_are_deleted_only_when_empty_and_their_offsets_go_with_them(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            member_id, _ = await _member(coordinator, "g")
            errors = []
            for group_id in ("g", "missing"):
                try:
                    await coordinator.delete_group(group_id)
                except KafkaError as error:
                    errors.append(error.code)
            assert errors == [ErrorCode.non_empty_group, ErrorCode.group_id_not_found]
            deleted = await coordinator.delete_offsets("g", [(TOPIC, 0), ("elsewhere", 0)])
            assert deleted == {
                (TOPIC, 0): ErrorCode.group_subscribed_to_topic,
                ("elsewhere", 0): ErrorCode.none,
            }
            coordinator.leave("g", [(member_id, None)])
            await coordinator.commit_offsets("g", -1, "", None, _offsets(3))
            await coordinator.delete_group("g")
            assert coordinator.describe("g") is None
        async with running(tmp_path) as reloaded:
            assert reloaded.describe("g") is None
            assert reloaded.fetch_offsets("g", None) == {}

    run(test)


def test_expired_offsets_and_then_the_empty_group_are_removed(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path, offsets_retention_ms=1) as coordinator:
            await coordinator.commit_offsets("old", -1, "", None, _offsets(9))
            await asyncio.sleep(0.01)
            await coordinator.expire_offsets()
            assert coordinator.describe("old") is None
            assert [g.state for g in coordinator.list_groups()] == []
        async with running(tmp_path) as reloaded:
            assert reloaded.fetch_offsets("old", None) == {}

    run(test)


def test_a_restored_group_comes_back_stable_with_its_members(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            member_id, generation = await _member(coordinator, "g")
            group = coordinator.describe("g")
            assert group is not None
            group.members[member_id].assignment = b"A"
            await coordinator.catalog.persist_group(group)
        async with running(tmp_path) as reloaded:
            group = reloaded.describe("g")
            assert group is not None and group.is_(GroupState.STABLE)
            assert group.members[member_id].assignment == b"A"
            reloaded.heartbeat("g", member_id, None, generation)
            assert [g.group_id for g in reloaded.list_groups(["stable"])] == ["g"]

    run(test)
