"""The daemon judges a chain market by the chain's clock (its latest block's time), which
is what the contract compares a question's earliest time and a challenge window with."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hexbytes import HexBytes

from oracle.app import assemble, open_store
from oracle.chain.contracts import ORACLE, AgentOracle, encode_call
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxRequest
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.daemon.chain_parts import CLOCK_FRESH, ChainConnection
from oracle.daemon.ports import MarketRef, Resolution
from oracle.errors import ChainError, ResolverError
from oracle.venues.own.venue import ChainVenue

from ..anvil import DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from .chain_world import ask_questions, build_world, daemon_config


def one_pass(config: Path, clock_ahead: float) -> None:
    async def run() -> None:
        assembly = assemble(load_settings(config), clock=lambda: time.time() + clock_ahead)
        try:
            await assembly.daemon.run_once()
        finally:
            await assembly.close()

    asyncio.run(run())


def test_a_question_is_due_when_the_chain_says_so_not_the_wall_clock(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, questions=0)
    chain_now = int(anvil.block()["timestamp"], 16)
    [question] = ask_questions(world, 1, earliest_time=chain_now + 600)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    store = open_store(load_settings(config))

    # The daemon's own clock is past the question's time; the chain's is not.
    one_pass(config, clock_ahead=3600)
    market = store.get_market(f"chain:{question}")
    assert market.state == MarketState.DISCOVERED, "not due on the chain: not researched"
    assert market.attempts == 0
    assert world.reverted() == []

    anvil.rpc("evm_increaseTime", 700)
    anvil.mine()
    one_pass(config, clock_ahead=0)
    assert store.get_market(f"chain:{question}").state == MarketState.SUBMITTED
    assert world.proposals() == {question: 1}
    store.engine.dispose()


class _CountingPool:
    """An RPC pool whose latest block is `timestamp`, counting the reads; `fail` makes the
    next read fail as a node would."""

    chain_id = 31337

    def __init__(self) -> None:
        self.reads = 0
        self.timestamp = 1_000
        self.fail = False

    async def call(self, method: str, *params: object) -> dict[str, int]:
        assert method == "eth_getBlockByNumber"
        self.reads += 1
        await asyncio.sleep(0.01)
        if self.fail:
            raise ChainError("node down")
        return {"timestamp": self.timestamp}


async def _nothing() -> None:
    return None


def _connection(pool: _CountingPool) -> ChainConnection[Any]:
    parts = SimpleNamespace(pool=pool, manager=SimpleNamespace(resume=_nothing))

    async def open_chain() -> Any:
        return parts

    return ChainConnection("test", open_chain, logging.getLogger("test"), "test", lambda _: {})


def test_the_chain_clock_is_read_once_for_callers_at_once_and_afresh_after() -> None:
    async def run() -> None:
        pool = _CountingPool()
        connection = _connection(pool)
        times = await asyncio.gather(*(connection.now() for _ in range(50)))
        assert set(times) == {1_000.0}
        assert pool.reads == 1

        pool.timestamp = 2_000
        assert await connection.now() == 1_000.0, "a read a moment ago is reused"
        await asyncio.sleep(CLOCK_FRESH)
        assert await connection.now() == 2_000.0
        assert pool.reads == 2

        await asyncio.sleep(CLOCK_FRESH)
        pool.fail = True
        with pytest.raises(ResolverError, match="chain clock: node down"):
            await connection.now()
        pool.fail = False
        assert await connection.now() == 2_000.0, "a failed read is not kept"
        assert pool.reads == 4

    asyncio.run(run())


def test_a_dispute_inside_the_window_is_seen_at_the_next_pass_from_the_contracts_events(
    anvil: Anvil, tmp_path: Path
) -> None:
    """The own contract's `AnswerDisputed` events tell the daemon of a dispute at the next
    pass, its challenge window still running; an undisputed answer in its window is not
    read at all until the window is over (no state read per answer per pass)."""
    world = build_world(anvil, tmp_path, questions=0)
    disputed, quiet = ask_questions(world, 2)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    one_pass(config, clock_ahead=0)
    store = open_store(load_settings(config))
    assert {store.get_market(f"chain:{q}").state for q in (disputed, quiet)} == {
        MarketState.SUBMITTED
    }

    async def dispute() -> None:
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as disputer:
            oracle = AgentOracle(disputer.pool, world.oracle)
            token, amount = await oracle.read("bond")
            intent = await disputer.submit(
                TxRequest(
                    key=f"dispute:{disputed}",
                    to=world.oracle,
                    data=encode_call(ORACLE, "dispute", HexBytes(disputed), token, amount),
                    value=amount,
                )
            )
            assert intent.state == IntentState.CONFIRMED, intent.error

    asyncio.run(dispute())
    reads: list[str] = []
    state = ChainVenue.state

    async def counted(venue: ChainVenue, market: MarketRef) -> Resolution:
        reads.append(market.external_id)
        return await state(venue, market)

    chain_now = int(anvil.block()["timestamp"], 16)
    assert (store.get_market(f"chain:{quiet}").window_ends_at or 0) > chain_now + 10
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ChainVenue, "state", counted)
        one_pass(config, clock_ahead=0)
    assert store.get_market(f"chain:{disputed}").state == MarketState.DISPUTED
    assert store.get_market(f"chain:{quiet}").state == MarketState.SUBMITTED
    assert quiet not in reads, "the undisputed answer in its window is not read"
    assert disputed in reads
    store.engine.dispose()
