"""The rebalance protocol on a real event loop, with group writes kept in a list."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from group_testing import group_config, subscription

from odradek.broker.group.group import Group
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.member import JoinResult
from odradek.broker.group.rebalance import JoinRequest, Rebalancer, SyncRequest
from odradek.broker.protocol.errors import ErrorCode, KafkaError

SESSION_MS = 200


def _join(
    member_id: str = "",
    instance: str | None = None,
    protocols: tuple[str, ...] = ("range",),
    v4: bool = True,
    session_ms: int = SESSION_MS,
) -> JoinRequest:
    return JoinRequest(
        member_id,
        instance,
        "client",
        "/127.0.0.1",
        session_ms,
        300,
        "consumer",
        tuple((name, subscription("t")) for name in protocols),
        require_known_member_id=v4,
    )


def _sync(result: JoinResult, assignments: dict[str, bytes] | None = None) -> SyncRequest:
    return SyncRequest(result.member_id, None, result.generation, None, None, assignments or {})


def _run(
    test: Callable[[Rebalancer, Group, list[int]], Awaitable[Any]],
    config: GroupConfig | None = None,
) -> Any:
    async def main() -> Any:
        stored: list[int] = []

        async def persist(group: Group) -> None:
            stored.append(group.generation)

        rebalancer = Rebalancer(config or group_config(), persist)
        try:
            return await asyncio.wait_for(test(rebalancer, Group("g"), stored), 5)
        finally:
            await rebalancer.close()

    return asyncio.run(main())


async def _join_two(rebalancer: Rebalancer, group: Group) -> tuple[JoinResult, JoinResult]:
    first = await rebalancer.join(group, _join(v4=False))
    # a second member joining a Stable group starts a rebalance the first must rejoin
    second_task = asyncio.create_task(rebalancer.join(group, _join(v4=False)))
    await asyncio.sleep(0.01)
    assert group.is_(GroupState.PREPARING_REBALANCE)
    again = await rebalancer.join(group, _join(first.member_id, v4=False))
    return again, await second_task


def test_join_v4_asks_a_new_member_to_come_back_with_its_id() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        first = await rebalancer.join(group, _join())
        assert first.error is ErrorCode.member_id_required and first.member_id
        assert group.is_empty and first.member_id in group.pending_members
        joined = await rebalancer.join(group, _join(first.member_id))
        assert joined.error is ErrorCode.none
        assert (joined.generation, joined.leader_id, joined.protocol_name) == (
            1,
            first.member_id,
            "range",
        )
        assert [m.member_id for m in joined.members] == [first.member_id]

    _run(test)


def test_the_leader_gets_every_members_metadata_and_followers_none() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        leader, follower = await _join_two(rebalancer, group)
        assert leader.generation == follower.generation == 2
        assert leader.leader_id == follower.leader_id == leader.member_id
        assert {m.member_id for m in leader.members} == {leader.member_id, follower.member_id}
        assert follower.members == ()

    _run(test)


def test_sync_hands_each_member_the_leaders_assignment_once_stored() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        leader, follower = await _join_two(rebalancer, group)
        waiting = asyncio.create_task(rebalancer.sync(group, _sync(follower)))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        assignments = {leader.member_id: b"L", follower.member_id: b"F"}
        mine = await rebalancer.sync(group, _sync(leader, assignments))
        assert (mine.error, mine.assignment) == (ErrorCode.none, b"L")
        assert (await waiting).assignment == b"F"
        assert group.is_(GroupState.STABLE) and stored == [2]

    _run(test)


def test_heartbeats_answer_with_the_errors_kafka_gives() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        joined = await rebalancer.join(group, _join(v4=False))
        await rebalancer.sync(group, _sync(joined, {joined.member_id: b"x"}))
        rebalancer.heartbeat(group, joined.member_id, None, joined.generation)
        errors = []
        for member_id, generation in (("nobody", 1), (joined.member_id, 7)):
            try:
                rebalancer.heartbeat(group, member_id, None, generation)
            except KafkaError as error:
                errors.append(error.code)
        assert errors == [ErrorCode.unknown_member_id, ErrorCode.illegal_generation]

    _run(test)


def test_a_silent_member_is_evicted_and_the_rest_rebalance() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        leader, follower = await _join_two(rebalancer, group)
        await rebalancer.sync(group, _sync(leader))
        await rebalancer.sync(group, _sync(follower))
        for _ in range(6):  # the leader keeps heartbeating, the follower does not
            await asyncio.sleep(SESSION_MS / 2000)
            try:
                rebalancer.heartbeat(group, leader.member_id, None, group.generation)
            except KafkaError as error:
                assert error.code is ErrorCode.rebalance_in_progress
                break
        assert follower.member_id not in group.members
        rejoined = await rebalancer.join(group, _join(leader.member_id))
        assert rejoined.generation == 3 and len(rejoined.members) == 1
        assert rebalancer.rebalances == 3

    _run(test)


def test_leaving_members_make_the_group_empty() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        leader, follower = await _join_two(rebalancer, group)
        codes = rebalancer.leave(group, [(leader.member_id, None), ("ghost", None)])
        assert codes == [ErrorCode.none, ErrorCode.unknown_member_id]
        rebalancer.leave(group, [(follower.member_id, None)])
        await asyncio.sleep(0.01)
        assert group.is_(GroupState.EMPTY) and group.generation == 3
        assert stored == [3]  # the empty generation is written too

    _run(test)


def test_a_static_member_rejoining_gets_a_new_id_and_fences_the_old_one() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        first = await rebalancer.join(group, _join(instance="i1"))
        assert first.error is ErrorCode.none  # static members skip MEMBER_ID_REQUIRED
        await rebalancer.sync(group, _sync(first, {first.member_id: b"A"}))
        again = await rebalancer.join(group, _join(instance="i1"))
        assert again.member_id != first.member_id
        assert again.generation == first.generation  # no rebalance for an unchanged member
        # it led the group, but is told the old leader id so it does not reassign
        assert again.leader_id == first.member_id and group.leader_id == again.member_id
        assert (await rebalancer.sync(group, _sync(again))).assignment == b"A"
        try:
            rebalancer.heartbeat(group, first.member_id, "i1", first.generation)
        except KafkaError as error:
            assert error.code is ErrorCode.fenced_instance_id
        else:
            raise AssertionError("the old member id was not fenced")
        assert rebalancer.leave(group, [("", "i1")]) == [ErrorCode.none]

    _run(test)


def test_the_initial_delay_gathers_members_into_one_generation() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        joins = [asyncio.create_task(rebalancer.join(group, _join(v4=False))) for _ in range(3)]
        results = await asyncio.gather(*joins)
        assert {result.generation for result in results} == {1}
        assert rebalancer.rebalances == 1

    _run(test, group_config(initial_rebalance_delay_ms=50))


def test_session_timeouts_outside_the_brokers_bounds_are_refused() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        result = await rebalancer.join(group, _join(session_ms=5))
        assert result.error is ErrorCode.invalid_session_timeout

    _run(test)


def test_a_member_with_no_protocol_in_common_is_refused() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        await rebalancer.join(group, _join(v4=False))
        result = await rebalancer.join(group, _join(protocols=("sticky",), v4=False))
        assert result.error is ErrorCode.inconsistent_group_protocol

    _run(test)


def test_a_full_group_refuses_new_members_but_not_a_returning_static_one() -> None:
    async def test(rebalancer: Rebalancer, group: Group, stored: list[int]) -> None:
        first = await rebalancer.join(group, _join(instance="i1"))
        await rebalancer.sync(group, _sync(first, {first.member_id: b"A"}))
        refused = await rebalancer.join(group, _join(v4=False))
        assert refused.error is ErrorCode.group_max_size_reached
        back = await rebalancer.join(group, _join(instance="i1"))
        assert back.error is ErrorCode.none

    _run(test, group_config(max_size=1))
