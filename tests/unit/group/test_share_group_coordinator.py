"""Share groups (KIP-932) in the coordinator over real partition logs (no sockets): joins,
epochs, sharing partitions, fencing, leaving, sessions, group-type conflicts answered as
Kafka answers them, deletion, and a new coordinator reading the group back."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from group_testing import group_config
from one_broker import OneBroker, one_broker

from odradek.broker.cluster.topic_planning import plan_new_partitions
from odradek.broker.group.consumer_heartbeat import HeartbeatRequest
from odradek.broker.group.coordinator import GroupCoordinator, OffsetToCommit
from odradek.broker.group.rebalance import JoinRequest, SyncRequest
from odradek.broker.group.share_group import ShareGroup, ShareGroupState
from odradek.broker.group.share_heartbeat import ShareHeartbeatRequest, ShareHeartbeatResult
from odradek.broker.protocol.errors import ErrorCode, KafkaError

TOPIC = "orders"


@asynccontextmanager
async def running(
    data_dir: Path, **config: Any
) -> AsyncIterator[tuple[GroupCoordinator, OneBroker]]:
    async with one_broker(data_dir, TOPIC, partitions=4) as broker:
        settings = {"offsets_topic_partitions": 3, "share_heartbeat_interval_ms": 100}
        coordinator = GroupCoordinator(
            group_config(**{**settings, **config}), broker.store, broker.replicas, lambda: 1
        )
        coordinator.start()
        await coordinator.find_coordinator("any")
        while coordinator.catalog.loading:
            await asyncio.sleep(0.001)
        try:
            yield coordinator, broker
        finally:
            await coordinator.stop()


def run(test: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(*args), 10))


def join(member_id: str, *topics: str) -> ShareHeartbeatRequest:
    return ShareHeartbeatRequest(member_id, 0, "client", "/127.0.0.1", None, topics or (TOPIC,))


def beat(member_id: str, epoch: int) -> ShareHeartbeatRequest:
    return ShareHeartbeatRequest(member_id, epoch, "client", "/127.0.0.1")


def partitions(result: ShareHeartbeatResult) -> set[int]:
    assert result.assignment is not None, "no assignment in the answer"
    return {p for parts in result.assignment.values() for p in parts}


def share_group(coordinator: GroupCoordinator, group_id: str = "g") -> ShareGroup:
    group = coordinator.describe(group_id)
    assert group is not None and group.share is not None
    return group.share


async def refused(work: Awaitable[object]) -> ErrorCode:
    with pytest.raises(KafkaError) as error:
        await work
    return error.value.code


def test_a_member_joins_under_its_own_id_and_gets_every_partition(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            member = str(uuid.uuid4())
            joined = await coordinator.share_heartbeat("g", join(member))
            assert (joined.member_id, joined.member_epoch) == (member, 1)
            assert joined.heartbeat_interval_ms == 100 and partitions(joined) == {0, 1, 2, 3}
            assert coordinator.is_share_member("g", member)
            assert not coordinator.is_share_member("g", "someone")
            assert not coordinator.is_share_member("other", member)
            # nothing changed: no assignment in the answer
            again = await coordinator.share_heartbeat("g", beat(member, 1))
            assert (again.member_epoch, again.assignment) == (1, None)
            listed = [(g.group_id, g.group_type, g.state_name) for g in coordinator.list_groups()]
            assert listed == [("g", "share", "Stable")]

    run(test)


def test_a_newcomer_bumps_the_epoch_and_each_member_takes_its_target_at_its_next_heartbeat(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            await coordinator.share_heartbeat("g", join("a"))
            b = await coordinator.share_heartbeat("g", join("b"))
            assert b.member_epoch == 2 and len(partitions(b)) == 2
            # no revocation: a moves straight to epoch 2 and its half
            a = await coordinator.share_heartbeat("g", beat("a", 1))
            assert a.member_epoch == 2 and partitions(a) == {0, 1, 2, 3} - partitions(b)
            assert share_group(coordinator).group_epoch == 2

    run(test)


def test_members_outnumbering_partitions_share_each_partition(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            members = [f"m{i}" for i in range(6)]
            for member in members:
                await coordinator.share_heartbeat("g", join(member))
            share = share_group(coordinator)
            results = [
                await coordinator.share_heartbeat("g", beat(m, share.members[m].member_epoch))
                for m in members
            ]
            assert {r.member_epoch for r in results} == {share.group_epoch}
            held = Counter(
                p for m in members for parts in share.members[m].assigned.values() for p in parts
            )
            assert held == {0: 2, 1: 2, 2: 2, 3: 2}  # ceil(6 / 4) members each

    run(test)


def test_leaving_and_silent_members_give_their_partitions_back(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path, share_session_timeout_ms=300) as (coordinator, _):
            await coordinator.share_heartbeat("g", join("a"))
            await coordinator.share_heartbeat("g", join("b"))
            assert len(partitions(await coordinator.share_heartbeat("g", beat("a", 1)))) == 2
            left = await coordinator.share_heartbeat("g", beat("b", -1))
            assert (left.member_id, left.member_epoch) == ("b", -1)
            assert not coordinator.is_share_member("g", "b")
            a = await coordinator.share_heartbeat("g", beat("a", 2))
            assert a.member_epoch == 3 and partitions(a) == {0, 1, 2, 3}
            await coordinator.share_heartbeat("g", join("c"))
            await asyncio.sleep(0.5)  # neither heartbeats: both sessions expire
            share = share_group(coordinator)
            assert share.state is ShareGroupState.EMPTY and not share.members
            assert share.group_epoch == share.assignment_epoch == 6

    run(test)


def test_a_groups_own_configs_set_its_heartbeat_interval_and_session(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, broker):
            configs = {"share.heartbeat.interval.ms": "70", "share.session.timeout.ms": "200"}
            await broker.store.set_group_configs("g", configs)
            joined = await coordinator.share_heartbeat("g", join("a"))
            assert joined.heartbeat_interval_ms == 70
            await asyncio.sleep(0.4)
            assert not coordinator.is_share_member("g", "a")

    run(test)


def test_wrong_epochs_are_fenced_and_the_previous_one_is_forgiven(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            await coordinator.share_heartbeat("g", join("a"))
            await coordinator.share_heartbeat("g", join("b"))
            moved = await coordinator.share_heartbeat("g", beat("a", 1))
            assert moved.member_epoch == 2
            # the answer that moved a on was lost: epoch 1 is still accepted
            assert (await coordinator.share_heartbeat("g", beat("a", 1))).member_epoch == 2
            assert await refused(coordinator.share_heartbeat("g", beat("a", 3))) is (
                ErrorCode.fenced_member_epoch
            )
            assert await refused(coordinator.share_heartbeat("g", beat("b", 1))) is (
                ErrorCode.fenced_member_epoch
            )
            assert await refused(coordinator.share_heartbeat("g", beat("x", 2))) is (
                ErrorCode.unknown_member_id
            )
            assert await refused(coordinator.share_heartbeat("g", beat("x", -1))) is (
                ErrorCode.unknown_member_id
            )
            assert await refused(coordinator.share_heartbeat("none", beat("a", 1))) is (
                ErrorCode.group_id_not_found
            )

    run(test)


def test_requests_kafka_refuses_are_refused_with_its_errors(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path, share_max_size=1) as (coordinator, _):
            invalid = [
                ("g", join("")),
                ("g", join("x" * 37)),  # longer than a UUID
                ("", join("a")),
                ("g", ShareHeartbeatRequest("a", 0, "c", "h", None, ())),  # joins to nothing
                ("g", ShareHeartbeatRequest("a", 0, "c", "h", "", (TOPIC,))),  # empty rack
                ("g", beat("a", -2)),
            ]
            for group_id, request in invalid:
                code = await refused(coordinator.share_heartbeat(group_id, request))
                assert code is ErrorCode.invalid_request, request
            await coordinator.share_heartbeat("g", join("a"))
            assert await refused(coordinator.share_heartbeat("g", join("b"))) is (
                ErrorCode.group_max_size_reached
            )

    run(test)


def test_new_partitions_of_a_subscribed_topic_bump_the_epoch(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, broker):
            await coordinator.share_heartbeat("g", join("a", TOPIC, "later"))
            store = broker.store
            topic = store.image.topics[TOPIC]
            await store.add_partitions(TOPIC, plan_new_partitions(store.image, topic, 6))
            grown = await coordinator.share_heartbeat("g", beat("a", 1))
            assert grown.member_epoch == 2 and partitions(grown) == set(range(6))

    run(test)


def test_a_new_coordinator_reads_the_share_group_back_from_the_log(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            await coordinator.share_heartbeat("g", join("a"))
            request = ShareHeartbeatRequest("b", 0, "c", "/h", "rack-1", (TOPIC,))
            await coordinator.share_heartbeat("g", request)
            await coordinator.share_heartbeat("g", beat("a", 1))
            before = share_group(coordinator)
        async with running(tmp_path) as (reloaded, _):
            after = share_group(reloaded)
            assert after == before and after.members["b"].rack_id == "rack-1"
            assert reloaded.is_share_member("g", "a")
            # the members carry on at their epochs
            assert (await reloaded.share_heartbeat("g", beat("a", 2))).member_epoch == 2

    run(test)


def test_other_kinds_of_groups_answer_as_kafka_does(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            # a share heartbeat to a consumer group or to a classic one (offsets only)
            consumer = HeartbeatRequest("c", 0, "client", "/h", rebalance_timeout_ms=1000,
                                        subscribed_topic_names=(TOPIC,))  # fmt: skip
            await coordinator.consumer_heartbeat("consumer", consumer, 1)
            offsets = {(TOPIC, 0): OffsetToCommit(5, 0, None)}
            await coordinator.commit_offsets("classic", -1, "", None, offsets)
            for group_id in ("consumer", "classic"):
                assert await refused(coordinator.share_heartbeat(group_id, join("s"))) is (
                    ErrorCode.group_id_not_found
                )
                with pytest.raises(KafkaError) as described:
                    coordinator.describe_share_group(group_id)
                assert described.value.code is ErrorCode.group_id_not_found
            # the classic and consumer APIs to a share group
            await coordinator.share_heartbeat("share", join("s"))
            assert await refused(coordinator.consumer_heartbeat("share", consumer, 1)) is (
                ErrorCode.group_id_not_found
            )
            classic_join = JoinRequest("", None, "c", "/h", 6000, 6000, "consumer",
                                       (("range", b""),), True)  # fmt: skip
            joined = await coordinator.join("share", classic_join)
            assert (joined.error, joined.member_id) == (ErrorCode.inconsistent_group_protocol, "")
            sync = await coordinator.sync("share", SyncRequest("s", None, 1, None, None, {}))
            assert sync.error is ErrorCode.unknown_member_id
            with pytest.raises(KafkaError) as beaten:
                coordinator.heartbeat("share", "s", None, 1)
            assert beaten.value.code is ErrorCode.unknown_member_id
            with pytest.raises(KafkaError) as left:
                coordinator.leave("share", [("s", None)])
            assert left.value.code is ErrorCode.unknown_member_id
            committed = await coordinator.commit_offsets("share", -1, "", None, offsets)
            assert committed == {(TOPIC, 0): ErrorCode.group_id_not_found}
            assert await refused(coordinator.delete_offsets("share", [(TOPIC, 0)])) is (
                ErrorCode.group_id_not_found
            )
            assert coordinator.fetch_offsets("share", [(TOPIC, 0)], ("s", 1)) == {(TOPIC, 0): None}

    run(test)


def test_an_empty_share_group_stays_until_deleted_and_then_is_gone(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as (coordinator, _):
            await coordinator.share_heartbeat("g", join("a"))
            assert await refused(coordinator.delete_group("g")) is ErrorCode.non_empty_group
            await coordinator.share_heartbeat("g", beat("a", -1))
            await coordinator.expire_offsets()  # share groups do not expire
            assert coordinator.describe("g") is not None
            await coordinator.delete_group("g")
            assert coordinator.describe("g") is None
        async with running(tmp_path) as (reloaded, _):
            assert reloaded.describe("g") is None

    run(test)
