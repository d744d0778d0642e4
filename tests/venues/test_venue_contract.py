"""The contract of the ports (`oracle.daemon.ports`), one suite run against every venue
kind on one anvil: each kind's world (`worlds.py`) asks, answers and lets time pass on a
real venue, and the venue is the one `oracle run` makes. A kind's optional ports are
asserted as a set, and their tests run for the kinds that implement them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

import pytest

from oracle.core.markets import MarketSpec
from oracle.daemon.ports import (
    AnsweredByOthers,
    Challenger,
    MarketRef,
    MarketSource,
    Receipt,
    ResolutionStatus,
    VenueClock,
)
from oracle.errors import SetupError

from .worlds import ANVIL_CHAIN_ID, OPTIONAL_PORTS, OTHER_CHAIN_ID, Venue, VenueWorld, open_venue

CHECKSUM = "ab" * 32
T = TypeVar("T")


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(scenario())  # type: ignore[arg-type]


async def poll(source: MarketSource) -> tuple[list[MarketSpec], list[str]]:
    """What one poll delivers (over all its `deliver` calls), and its lines."""
    delivered: list[MarketSpec] = []

    async def deliver(specs: list[MarketSpec]) -> None:
        delivered.extend(specs)

    lines = await source.poll(deliver)
    return delivered, lines


def ids(specs: list[MarketSpec]) -> list[str]:
    return [spec.market_id for spec in specs]


async def discovered(venue: Venue, market_id: str) -> MarketRef:
    """The market as the resolver is handed it once the source delivered it."""
    specs, _ = await poll(venue.source)
    [spec] = [s for s in specs if s.market_id == market_id]
    return MarketRef(spec.market_id, spec.source, spec.external_id, spec.outcomes, spec.details)


def submitted(market: MarketRef, receipt: Receipt) -> MarketRef:
    """The market as the daemon records it once its answer was accepted."""
    submission = {
        "reference": receipt.reference,
        "final_after": receipt.final_after,
        "gas_used": receipt.gas_used,
        **receipt.details,
    }
    return replace(market, submission=submission)


def requires(world: VenueWorld, port: type) -> None:
    if port not in world.ports:
        pytest.skip(f"{world.kind} does not implement {port.__name__}")


# -- what every kind is ----------------------------------------------------------------------


def test_each_kind_is_made_of_its_classes_and_implements_its_ports(
    world: VenueWorld, database: str
) -> None:
    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            assert (type(venue.source), type(venue.resolver)) == world.classes
            implemented = {
                port
                for port in OPTIONAL_PORTS
                if any(isinstance(part, port) for part in venue.objects())
            }
            assert implemented == set(world.ports)
        finally:
            await venue.close()

    run(scenario)


# -- MarketSource and Resolver: start, poll, propose, state, settle, aclose ---------------------


def test_start_twice_is_harmless(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            await venue.start()
            await venue.start()
            specs, _ = await poll(venue.source)
            assert market_id in ids(specs)
        finally:
            await venue.close()

    run(scenario)


def test_a_node_on_another_chain_is_a_setup_error_naming_the_setting(
    world: VenueWorld, database: str
) -> None:
    if not world.on_chain:
        pytest.skip(f"{world.kind} has no chain")
    elsewhere = world.settings(database, chain_id=OTHER_CHAIN_ID)

    async def scenario() -> None:
        venue = open_venue(elsewhere)
        try:
            with pytest.raises(SetupError) as refused:
                await venue.start()
            assert refused.value.key == "chain.rpc.chain_id"
            assert f"serves chain id {ANVIL_CHAIN_ID}" in str(refused.value)
            # Nothing was left open: the same refusal again, then a harmless close.
            with pytest.raises(SetupError):
                await venue.start()
        finally:
            await venue.close()

    run(scenario)


def test_a_venue_that_cannot_work_is_a_setup_error_naming_the_setting(
    world: VenueWorld, database: str
) -> None:
    if not world.on_chain:
        pytest.skip(f"{world.kind} checks nothing before its first request")
    unusable, key = world.unusable_settings(database)

    async def scenario() -> None:
        venue = open_venue(unusable)
        try:
            with pytest.raises(SetupError) as refused:
                await venue.start()
            assert refused.value.key == key
        finally:
            await venue.close()

    run(scenario)


def test_a_poll_delivers_a_due_market_once(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            specs, _ = await poll(venue.source)
            assert ids(specs).count(market_id) == 1
        finally:
            await venue.close()

    run(scenario)


def test_a_hostile_question_never_hides_the_others(world: VenueWorld, database: str) -> None:
    hostile = world.ask_hostile_question()
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            specs, lines = await poll(venue.source)
        finally:
            await venue.close()
        assert ids(specs).count(market_id) == 1
        if hostile.line is None:  # delivered, for a person or as text shown escaped
            assert hostile.market_id in ids(specs)
        else:  # skipped, with a line that names it
            assert hostile.market_id not in ids(specs)
            assert [line for line in lines if hostile.line in line], lines

    run(scenario)


class Crash(Exception):
    """The daemon dying while it stores what a poll delivered."""


def test_a_crash_before_deliver_returned_loses_no_market(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()
    settings = world.settings(database)

    async def crash(specs: list[MarketSpec]) -> None:
        raise Crash

    async def scenario() -> None:
        venue = open_venue(settings)
        try:
            with pytest.raises(Crash):
                await venue.source.poll(crash)
        finally:
            await venue.close()
        restarted = open_venue(settings)  # the same database: its checkpoints
        try:
            specs, _ = await poll(restarted.source)
            assert market_id in ids(specs)
        finally:
            await restarted.close()

    run(scenario)


def test_propose_twice_and_after_a_restart_answers_once(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()
    settings = world.settings(database)

    async def scenario() -> list[str]:
        venue = open_venue(settings)
        try:
            market = await discovered(venue, market_id)
            first = await venue.resolver.propose(market, "YES", CHECKSUM)
            again = await venue.resolver.propose(market, "YES", CHECKSUM)
        finally:
            await venue.close()
        restarted = open_venue(settings)
        try:
            after_restart = await restarted.resolver.propose(market, "YES", CHECKSUM)
        finally:
            await restarted.close()
        return [first.reference, again.reference, after_restart.reference]

    references = run(scenario)
    assert world.answers_on_venue(market_id) == 1
    assert len(set(references)) == 1, references


def test_state_is_submitted_then_final_once_the_window_passed(
    world: VenueWorld, database: str
) -> None:
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            market = await discovered(venue, market_id)
            if world.windowed:
                assert (await venue.resolver.state(market)).status is ResolutionStatus.OPEN
            market = submitted(market, await venue.resolver.propose(market, "YES", CHECKSUM))
            answered = await venue.resolver.state(market)
            if world.windowed:
                assert answered.status is ResolutionStatus.PROPOSED
                await asyncio.to_thread(world.end_window)
            final = await venue.resolver.state(market)
            assert final.status is ResolutionStatus.FINAL
            assert final.outcome in (None, "YES")
        finally:
            await venue.close()

    run(scenario)


def test_settle_twice_is_harmless(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            market = await discovered(venue, market_id)
            market = submitted(market, await venue.resolver.propose(market, "YES", CHECKSUM))
            await asyncio.to_thread(world.end_window)
            await venue.resolver.settle(market)
            sent = world.sent_by_us()
            await venue.resolver.settle(market)
            assert world.sent_by_us() == sent  # the second sent nothing
            assert (await venue.resolver.state(market)).status is ResolutionStatus.FINAL
        finally:
            await venue.close()

    run(scenario)


def test_aclose_twice_is_harmless_started_or_not(world: VenueWorld, database: str) -> None:
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        never_started = open_venue(world.settings(database))
        await never_started.aclose()
        await never_started.aclose()
        await never_started.close()
        venue = open_venue(world.settings(database))
        specs, _ = await poll(venue.source)
        assert market_id in ids(specs)
        await venue.aclose()
        await venue.aclose()
        await venue.close()

    run(scenario)


# -- the optional ports ----------------------------------------------------------------------


def test_a_venue_clock_shows_the_venue_s_time(world: VenueWorld, database: str) -> None:
    requires(world, VenueClock)

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            [clock] = [part for part in venue.objects() if isinstance(part, VenueClock)]
            shown = await clock.now()
            assert shown == await asyncio.to_thread(world.venue_time)
        finally:
            await venue.close()

    run(scenario)


def test_answers_by_others_are_reported_once_and_nothing_is_sent(
    world: VenueWorld, database: str
) -> None:
    requires(world, AnsweredByOthers)
    market_id = world.ask_answerable_question()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            [others] = [p for p in venue.objects() if isinstance(p, AnsweredByOthers)]
            market = await discovered(venue, market_id)
            assert market.external_id not in await others.answered_by_others()
            await asyncio.to_thread(world.answer_on_venue_as_someone_else, market_id)
            sent = world.sent_by_us()
            assert market.external_id in await others.answered_by_others()
            assert market.external_id not in await others.answered_by_others()
            assert world.sent_by_us() == sent
        finally:
            await venue.close()

    run(scenario)


def other(outcome: str) -> str:
    return "NO" if outcome == "YES" else "YES"


async def answered_by_someone_else(venue: Venue, market_id: str, ours: str) -> MarketRef:
    """The market as the daemon records it after its `propose` found another party's
    answer standing (nothing sent; the receipt says what a person could confirm)."""
    market = await discovered(venue, market_id)
    return submitted(market, await venue.resolver.propose(market, ours, CHECKSUM))


def test_a_challenge_of_the_standing_answer_sends_nothing(world: VenueWorld, database: str) -> None:
    """The venue is read again first: the standing answer is the decided one."""
    requires(world, Challenger)
    market_id, theirs = world.ask_question_answered_by_someone_else()

    async def scenario() -> None:
        venue = open_venue(world.settings(database))
        try:
            [challenger] = [p for p in venue.objects() if isinstance(p, Challenger)]
            market = await answered_by_someone_else(venue, market_id, theirs)
            sent = world.sent_by_us()
            challenged = await challenger.challenge(market, theirs)
            assert challenged.sent is None
            assert challenged.reason
            assert world.sent_by_us() == sent
        finally:
            await venue.close()

    run(scenario)
    assert world.challenges_on_venue(market_id) == 0


def test_a_challenge_twice_and_after_a_restart_is_sent_once(
    world: VenueWorld, database: str
) -> None:
    requires(world, Challenger)
    market_id, theirs = world.ask_question_answered_by_someone_else()
    ours = other(theirs)
    settings = world.settings(database)

    async def scenario() -> None:
        venue = open_venue(settings)
        try:
            [challenger] = [p for p in venue.objects() if isinstance(p, Challenger)]
            market = await answered_by_someone_else(venue, market_id, ours)
            first = await challenger.challenge(market, ours)
            assert first.sent is not None, first.reason
            await challenger.challenge(market, ours)
        finally:
            await venue.close()
        restarted = open_venue(settings)
        try:
            [challenger] = [p for p in restarted.objects() if isinstance(p, Challenger)]
            await challenger.challenge(market, ours)
        finally:
            await restarted.close()

    run(scenario)
    assert world.challenges_on_venue(market_id) == 1
