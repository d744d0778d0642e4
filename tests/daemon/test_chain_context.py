"""A chain context is shared by every venue on its chain: the venues read the chain's
clock through it once per moment, and a pre-send check that serves all of them is put on
the chain's transaction manager once, whichever venues ask for it."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import oracle.venues.reality.wiring as reality_wiring
from oracle.app import open_store
from oracle.chain.keys import LocalSigner
from oracle.chain.settings import NamedChain
from oracle.chain.txmanager import TxManager
from oracle.config import Settings
from oracle.daemon.chain_context import ChainContext
from oracle.daemon.chain_parts import CLOCK_FRESH, ChainClock, ChainConnection
from oracle.devchain import DEV_KEYS
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.own.wiring import ChainWiring
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.reality.wiring import RealityWiring

REALITY = "0x00000000000000000000000000000000000000A1"
BOND = {"initial_wei": 10**15}


class _BlockCountingPool:
    """A pool whose latest block is at `timestamp`, counting the block reads."""

    chain_id = 31337

    def __init__(self) -> None:
        self.reads = 0
        self.timestamp = 1_000

    async def call(self, method: str, *params: object) -> dict[str, int]:
        assert method == "eth_getBlockByNumber"
        self.reads += 1
        await asyncio.sleep(0.01)
        return {"timestamp": self.timestamp}

    async def close(self) -> None:
        return None


class _OneChain:
    """A shared chain (`SharedChain`) as a chain context's wirings are: one clock."""

    def __init__(self, pool: _BlockCountingPool) -> None:
        self.clock = ChainClock()
        self._parts = SimpleNamespace(pool=pool)

    async def __call__(self) -> Any:
        return self._parts

    async def resume(self, source: str) -> None:
        return None

    async def release(self, source: str) -> None:
        return None


def test_two_venues_on_one_chain_read_its_clock_once_per_period() -> None:
    async def run() -> None:
        pool = _BlockCountingPool()
        chain = _OneChain(pool)
        venues = [
            ChainConnection(name, chain, logging.getLogger("test"), "test", lambda _: {})
            for name in ("uma", "reality")
        ]
        times = await asyncio.gather(*(venue.now() for venue in venues for _ in range(20)))
        assert set(times) == {1_000.0}
        assert pool.reads == 1, "one read for both venues"

        pool.timestamp = 2_000
        assert [await venue.now() for venue in venues] == [1_000.0, 1_000.0]
        assert pool.reads == 1
        await asyncio.sleep(CLOCK_FRESH)
        assert [await venue.now() for venue in venues] == [2_000.0, 2_000.0]
        assert pool.reads == 2

    asyncio.run(run())


def _context(tmp_path: Path) -> ChainContext:
    settings = Settings(database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"})
    return ChainContext(NamedChain(chain_id=31337), open_store(settings))


def test_the_venues_of_a_chain_context_share_its_clock(tmp_path: Path) -> None:
    context = _context(tmp_path)
    own = ChainWiring(ChainSourceConfig(kind="chain"), context)
    reality = RealityWiring(
        RealitySourceConfig(kind="reality", contract_address=REALITY, bond=BOND), context
    )
    assert own.clock is context.clock
    assert reality.clock is context.clock
    assert _context(tmp_path).clock is not context.clock, "another chain, another clock"


def test_the_arbitration_check_is_registered_once_per_chain_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered: list[TxManager] = []
    monkeypatch.setattr(reality_wiring, "register_arbitration_check", registered.append)
    context = _context(tmp_path)
    pool = _BlockCountingPool()

    async def unlock() -> LocalSigner:
        return LocalSigner(DEV_KEYS[0])

    async def start_pool() -> Any:
        return pool

    monkeypatch.setattr(context, "_unlock", unlock)
    monkeypatch.setattr(context, "_start_pool", start_pool)

    def reality(name: str) -> RealityWiring:
        config = RealitySourceConfig(kind="reality", name=name, contract_address=REALITY, bond=BOND)
        return RealityWiring(config, context)

    async def run() -> None:
        reality("omen")
        reality("seer")
        assert registered == [], "registered on the manager, once it is made"
        _, manager, _ = await context.open("omen")
        await context.open("seer")
        assert registered == [manager]
        reality("late")  # a venue wired once the manager is made: nothing new
        assert registered == [manager]
        await context.release("omen")
        await context.release("seer")
        _, again, _ = await context.open("omen")  # a new manager gets the check too
        assert again is not manager
        assert registered == [manager, again]
        await context.release("omen")

    asyncio.run(run())
