"""KIP-848 consumer groups in the coordinator over real partition logs (no sockets): joins,
epochs, fencing, leaving, sessions, static members, commits with member epochs, and a new
coordinator reading the group back from ``__consumer_offsets``."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment
from group_testing import group_config, subscription
from one_broker import one_broker

from odradek.broker.group.consumer_group import ConsumerGroupState
from odradek.broker.group.consumer_heartbeat import HeartbeatRequest, HeartbeatResult
from odradek.broker.group.consumer_protocol import decode_assignment
from odradek.broker.group.coordinator import GroupCoordinator, OffsetToCommit
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.rebalance import JoinRequest, SyncRequest
from odradek.broker.protocol.errors import ErrorCode, KafkaError

TOPIC = "orders"
V1 = 1


@asynccontextmanager
async def running(data_dir: Path, **config: Any) -> AsyncIterator[GroupCoordinator]:
    async with one_broker(data_dir, TOPIC, partitions=4) as broker:
        settings = {"offsets_topic_partitions": 3, "consumer_heartbeat_interval_ms": 100}
        coordinator = GroupCoordinator(
            group_config(**{**settings, **config}), broker.store, broker.replicas, lambda: 1
        )
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


def join(member_id: str, **fields: Any) -> HeartbeatRequest:
    return HeartbeatRequest(
        member_id=member_id,
        member_epoch=0,
        client_id="client",
        client_host="/127.0.0.1",
        rebalance_timeout_ms=fields.pop("rebalance_timeout_ms", 5000),
        subscribed_topic_names=(TOPIC,),
        owned=None,
        **fields,
    )


def beat(member_id: str, epoch: int, owned: dict[uuid.UUID, tuple[int, ...]]) -> HeartbeatRequest:
    return HeartbeatRequest(member_id, epoch, "client", "/127.0.0.1", owned=owned)


def owned(result: HeartbeatResult) -> dict[uuid.UUID, tuple[int, ...]]:
    assert result.assignment is not None
    return {topic: tuple(sorted(p)) for topic, p in result.assignment.items()}


def partitions(result: HeartbeatResult) -> set[int]:
    return {p for parts in (result.assignment or {}).values() for p in parts}


async def settle(
    coordinator: GroupCoordinator, group: str, results: dict[str, HeartbeatResult]
) -> dict[str, HeartbeatResult]:
    """Heartbeat every member, reporting what it was given, until the group is Stable."""
    for _ in range(10):
        for member_id, last in list(results.items()):
            reply = await coordinator.consumer_heartbeat(
                group, beat(member_id, last.member_epoch, owned(last)), V1
            )
            results[member_id] = (
                reply
                if reply.assignment is not None
                else HeartbeatResult(
                    reply.member_id,
                    reply.member_epoch,
                    reply.heartbeat_interval_ms,
                    last.assignment,
                )
            )
        described = coordinator.describe(group)
        assert described is not None and described.consumer is not None
        if described.consumer.state is ConsumerGroupState.STABLE:
            return results
    raise AssertionError("the group did not settle")


def test_two_members_share_the_partitions_and_the_first_revokes_before_the_second_gets_any(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            first = await coordinator.consumer_heartbeat("g", join("a"), V1)
            assert (first.member_epoch, partitions(first)) == (1, {0, 1, 2, 3})
            second = await coordinator.consumer_heartbeat("g", join("b"), V1)
            assert second.member_epoch == 2 and partitions(second) == set()
            # a still owns everything: it is asked to keep two and revoke two, at epoch 1
            revoke = await coordinator.consumer_heartbeat("g", beat("a", 1, owned(first)), V1)
            assert revoke.member_epoch == 1 and len(partitions(revoke)) == 2
            results = await settle(coordinator, "g", {"a": revoke, "b": second})
            assert partitions(results["a"]) | partitions(results["b"]) == {0, 1, 2, 3}
            assert not partitions(results["a"]) & partitions(results["b"])
            assert {r.member_epoch for r in results.values()} == {2}

    run(test)


def test_wrong_epochs_are_fenced_and_a_lost_answer_is_forgiven(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            joined = await coordinator.consumer_heartbeat("g", join("a"), V1)
            with pytest.raises(KafkaError) as fenced:
                await coordinator.consumer_heartbeat("g", beat("a", 2, {}), V1)
            assert fenced.value.code is ErrorCode.fenced_member_epoch
            with pytest.raises(KafkaError) as unknown:
                await coordinator.consumer_heartbeat("g", beat("nobody", 1, {}), V1)
            assert unknown.value.code is ErrorCode.unknown_member_id
            b = await coordinator.consumer_heartbeat("g", join("b"), V1)
            # b's join bumped the epoch: a moves to epoch 2; if that answer is lost, a comes
            # back with epoch 1 and a subset of its partitions, which is accepted
            moved = await settle(coordinator, "g", {"a": joined, "b": b})
            retried = await coordinator.consumer_heartbeat("g", beat("a", 1, owned(moved["a"])), V1)
            assert retried.member_epoch == moved["a"].member_epoch
            # ... but not with partitions beyond its assignment
            with pytest.raises(KafkaError) as behind:
                await coordinator.consumer_heartbeat("g", beat("a", 1, owned(joined)), V1)
            assert behind.value.code is ErrorCode.fenced_member_epoch

    run(test)


def test_requests_kafka_refuses_are_refused_with_its_errors(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            cases = [
                (join(""), ErrorCode.invalid_request),
                (join("a", rebalance_timeout_ms=-1), ErrorCode.invalid_request),
                (join("a", server_assignor="sticky"), ErrorCode.unsupported_assignor),
                (
                    join("a", subscribed_topic_regex="(?=lookahead)"),
                    ErrorCode.invalid_regular_expression,
                ),
            ]
            for request, code in cases:
                with pytest.raises(KafkaError) as refused:
                    await coordinator.consumer_heartbeat("g", request, V1)
                assert refused.value.code is code, request

    run(test)


def test_a_regex_subscription_takes_every_matching_topic(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            request = join("a", subscribed_topic_regex="ord.*")
            request = HeartbeatRequest(**{**request.__dict__, "subscribed_topic_names": None})
            result = await coordinator.consumer_heartbeat("g", request, V1)
            assert partitions(result) == {0, 1, 2, 3}
            missing = HeartbeatRequest(**{**request.__dict__, "member_id": "b",
                                          "subscribed_topic_regex": "rders"})  # fmt: skip
            assert partitions(await coordinator.consumer_heartbeat("h", missing, V1)) == set()

    run(test)


def test_leaving_and_silent_members_give_their_partitions_back(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path, consumer_session_timeout_ms=300) as coordinator:
            a = await coordinator.consumer_heartbeat("g", join("a"), V1)
            b = await coordinator.consumer_heartbeat("g", join("b"), V1)
            results = await settle(coordinator, "g", {"a": a, "b": b})
            leave = HeartbeatRequest("b", -1, "client", "/127.0.0.1")
            left = await coordinator.consumer_heartbeat("g", leave, V1)
            assert left.member_epoch == -1
            alone = await settle(coordinator, "g", {"a": results["a"]})
            assert partitions(alone["a"]) == {0, 1, 2, 3}
            c = await coordinator.consumer_heartbeat("g", join("c"), V1)
            await settle(coordinator, "g", {"a": alone["a"], "c": c})
            await asyncio.sleep(0.5)  # neither heartbeats: both sessions expire
            group = coordinator.describe("g")
            assert group is not None and group.consumer is not None
            assert group.consumer.state is ConsumerGroupState.EMPTY

    run(test)


def test_a_static_member_back_under_a_new_id_gets_its_partitions_without_a_rebalance(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            a = await coordinator.consumer_heartbeat("g", join("a1", instance_id="a"), V1)
            b = await coordinator.consumer_heartbeat("g", join("b1", instance_id="b"), V1)
            results = await settle(coordinator, "g", {"a1": a, "b1": b})
            before = partitions(results["a1"])
            leave = HeartbeatRequest("a1", -2, "client", "/127.0.0.1", instance_id="a")
            assert (await coordinator.consumer_heartbeat("g", leave, V1)).member_epoch == -2
            with pytest.raises(KafkaError) as taken:
                await coordinator.consumer_heartbeat("g", join("b2", instance_id="b"), V1)
            assert taken.value.code is ErrorCode.unreleased_instance_id
            group = coordinator.describe("g")
            assert group is not None and group.consumer is not None
            epoch = group.consumer.group_epoch
            back = await coordinator.consumer_heartbeat("g", join("a2", instance_id="a"), V1)
            assert partitions(back) == before
            assert set(group.consumer.members) == {"a2", "b1"}
            assert group.consumer.group_epoch == epoch, "the group rebalanced"

    run(test)


def test_commits_and_fetches_check_the_member_epoch(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            a = await coordinator.consumer_heartbeat("g", join("a"), V1)
            epoch = a.member_epoch
            offsets = {(TOPIC, p): OffsetToCommit(10 + p, 0, None) for p in range(4)}
            done = await coordinator.commit_offsets("g", epoch, "a", None, offsets)
            assert set(done.values()) == {ErrorCode.none}
            ahead = await coordinator.commit_offsets("g", epoch + 1, "a", None, offsets)
            assert set(ahead.values()) == {ErrorCode.stale_member_epoch}
            stranger = await coordinator.commit_offsets("g", epoch, "x", None, offsets)
            assert set(stranger.values()) == {ErrorCode.unknown_member_id}
            # b joins: a keeps two partitions it got at epoch 1, so commits at epoch 1 for
            # them pass once a is at epoch 2, and those for partitions it gave up do not
            b = await coordinator.consumer_heartbeat("g", join("b"), V1)
            results = await settle(coordinator, "g", {"a": a, "b": b})
            kept = partitions(results["a"])
            old = await coordinator.commit_offsets("g", epoch, "a", None, offsets)
            assert {p for (_, p), code in old.items() if code is ErrorCode.none} == kept
            assert coordinator.fetch_offsets("g", None, ("a", results["a"].member_epoch))
            with pytest.raises(KafkaError) as stale:
                coordinator.fetch_offsets("g", None, ("a", epoch - 1))
            assert stale.value.code is ErrorCode.stale_member_epoch

    run(test)


def test_a_new_coordinator_reads_the_group_back_from_the_log(tmp_path: Path) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            a = await coordinator.consumer_heartbeat(
                "g", join("a", instance_id="i", rack_id="r"), V1
            )
            b = await coordinator.consumer_heartbeat("g", join("b"), V1)
            results = await settle(coordinator, "g", {"a": a, "b": b})
            group = coordinator.describe("g")
            assert group is not None and group.consumer is not None
            before = group.consumer
        async with running(tmp_path) as reloaded:
            again = reloaded.describe("g")
            assert again is not None and again.consumer is not None
            after = again.consumer
            assert (after.group_epoch, after.assignment_epoch, after.target) == (
                before.group_epoch,
                before.assignment_epoch,
                before.target,
            )
            assert {m: (x.member_epoch, x.assigned, x.instance_id, x.rack_id)
                    for m, x in after.members.items()} == {
                m: (x.member_epoch, x.assigned, x.instance_id, x.rack_id)
                for m, x in before.members.items()}  # fmt: skip
            # the members carry on at their epochs
            reply = await reloaded.consumer_heartbeat(
                "g", beat("a", results["a"].member_epoch, owned(results["a"])), V1
            )
            assert reply.member_epoch == results["a"].member_epoch

    run(test)


def consumer_assignment(partitions: dict[str, range]) -> bytes:
    """A classic leader's assignment as aiokafka encodes it."""
    encoded: bytes = ConsumerProtocolMemberAssignment(
        0, [(topic, list(p)) for topic, p in partitions.items()], b""
    ).encode()
    return encoded


async def _classic_member(
    coordinator: GroupCoordinator, group: str, member_id: str = ""
) -> tuple[str, int, bytes]:
    """A classic member joined and synced: (member id, generation, assignment)."""
    request = JoinRequest(member_id, None, "classic", "/127.0.0.1", 6000, 5000, "consumer",
                          (("range", subscription(TOPIC)),), False)  # fmt: skip
    joined = await coordinator.join(group, request)
    assert joined.error is ErrorCode.none, joined
    sync = SyncRequest(joined.member_id, None, joined.generation, "consumer", None, {})
    if joined.leader_id == joined.member_id:  # a classic group: the leader assigns all
        sync = SyncRequest(joined.member_id, None, joined.generation, "consumer", None,
                           {joined.member_id: consumer_assignment({TOPIC: range(4)})})  # fmt: skip
    synced = await coordinator.sync(group, sync)
    assert synced.error is ErrorCode.none, synced
    return joined.member_id, joined.generation, synced.assignment


def test_a_live_classic_group_upgrades_when_a_consumer_member_joins_and_downgrades_when_it_leaves(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with running(tmp_path) as coordinator:
            classic_id, generation, assignment = await _classic_member(coordinator, "g")
            assert decode_assignment(assignment) == {TOPIC: (0, 1, 2, 3)}
            offsets = {(TOPIC, p): OffsetToCommit(7, 0, None) for p in range(4)}
            await coordinator.commit_offsets("g", generation, classic_id, None, offsets)

            modern = await coordinator.consumer_heartbeat("g", join("modern"), V1)
            group = coordinator.describe("g")
            assert group is not None and group.consumer is not None
            assert set(group.consumer.members) == {classic_id, "modern"}
            assert partitions(modern) == set(), "the classic member still owns everything"
            # the classic member is told to rejoin; it gets half, the modern member the rest
            with pytest.raises(KafkaError) as rejoin:
                coordinator.heartbeat("g", classic_id, None, generation)
            assert rejoin.value.code is ErrorCode.rebalance_in_progress
            _, epoch, kept = await _classic_member(coordinator, "g", classic_id)
            assert len(decode_assignment(kept)[TOPIC]) == 2
            coordinator.heartbeat("g", classic_id, None, epoch)  # caught up
            settled = await settle(coordinator, "g", {"modern": modern})
            assert partitions(settled["modern"]) == {0, 1, 2, 3} - set(
                decode_assignment(kept)[TOPIC]
            )
            assert {o.offset for o in coordinator.fetch_offsets("g", None).values()} == {7}

            leave = HeartbeatRequest("modern", -1, "client", "/127.0.0.1")
            await coordinator.consumer_heartbeat("g", leave, V1)
            assert group.consumer is None and set(group.members) == {classic_id}
            assert group.state is GroupState.PREPARING_REBALANCE
            assert {o.offset for o in coordinator.fetch_offsets("g", None).values()} == {7}
        async with running(tmp_path) as reloaded:
            again = reloaded.describe("g")
            assert again is not None and again.consumer is None
            assert set(again.members) == {classic_id}

    run(test)
