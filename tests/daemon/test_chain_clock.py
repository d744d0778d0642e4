"""The daemon judges a chain market by the chain's clock (its latest block's time), which
is what the contract compares a question's earliest time and a challenge window with."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from oracle.app import assemble, open_store
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState

from ..anvil import Anvil
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
