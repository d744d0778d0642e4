"""One bond budget per signer and currency on a chain, whatever venue posts the bond.

Two deployments of UMA's Optimistic Oracle V2 on one anvil chain accept the same bond
currency; two `uma` sources (one each) on ONE chain of `chains:`, so ONE signer and ONE
transaction manager (the chain's context). Seven requests are delivered in one daemon
pass, at the daemon's concurrency: every bond is weighed against what the signer has at
stake in that currency across both venues.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.config import Settings, load_settings
from oracle.core.ancillary import parse_ancillary
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import (
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    OptimisticOracleV2,
    RequestKey,
    RequestState,
    identifier_bytes,
)
from oracle.venues.uma.stack import (
    UmaStack,
    ask_like_polymarket,
    deploy_style_requester,
    deploy_uma_stack,
)
from oracle.venues.uma.venue import UmaVenue

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from .test_uma_e2e import AGENTS, AGREED, BOND, FINAL_FEE, LIVENESS, REWARD, call
from .test_uma_e2e import polymarket_question as question_text
from .venue_world import chain_time, et_deadline, gauge, one_pass

ASKER_KEY, OUR_KEY = DEV_KEYS[1], DEV_KEYS[2]
OURS = DEV_ADDRESSES[2]
WHOLE = 10**18  # the bond currency has 18 decimals
MAX_OUTSTANDING = 250  # whole tokens: room for two bonds of 105, not three
MAX_PER_REQUEST = 150


class TwoDeployments:
    """Two OOv2 stacks sharing one bond currency, each with a Polymarket-style requester."""

    def __init__(self, anvil: Anvil, tmp_path: Path) -> None:
        self.anvil = anvil
        self.tmp_path = tmp_path
        self.replays = tmp_path / "replays"
        self.replays.mkdir()
        self.keys: dict[str, tuple[str, RequestKey]] = {}  # market id -> (oracle, request)
        self.stacks, self.requesters = asyncio.run(self._deploy())
        self.currency = self.stacks[0].currency

    async def _deploy(self) -> tuple[list[UmaStack], list[str]]:
        async with manager_for(self.anvil.url) as deployer:
            first = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
            second = await deploy_uma_stack(
                deployer, liveness=LIVENESS, final_fee=FINAL_FEE, currency=first.currency
            )
            requesters = [
                await deploy_style_requester(deployer, stack) for stack in (first, second)
            ]
            for account in (*requesters, OURS):
                await call(
                    deployer, TESTNET_ERC20, first.currency, "allocateTo", account, 20 * BOND
                )
        return [first, second], requesters

    def ask(self, venue: int, title: str, *, bond: int = BOND) -> str:
        """A question through venue `venue`'s requester, answerable at once; its market id."""
        deadline, _ = et_deadline(chain_time(self.anvil) - 2 * 86400)

        async def run() -> RequestKey:
            async with manager_for(self.anvil.url, key=ASKER_KEY) as asker:
                asked = await ask_like_polymarket(
                    asker,
                    self.requesters[venue],
                    question_text(title, deadline),
                    reward=REWARD,
                    bond=bond,
                )
            return RequestKey(
                asked.requester,
                identifier_bytes(YES_OR_NO_QUERY),
                asked.timestamp,
                asked.ancillary_data,
            )

        key = asyncio.run(run())
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in AGREED],
            market_id=title,
            question=parse_ancillary(key.ancillary_data).text,
            outcomes=["NO", "YES"],
        )
        (self.replays / f"{key.id_hex}.json").write_text(json.dumps(document))
        market_id = f"{SOURCES[venue]}:{key.id_hex}"
        self.keys[market_id] = (self.stacks[venue].optimistic_oracle, key)
        return market_id

    def config(self, database_url: str) -> Settings:
        risk = {"max_bond_outstanding": MAX_OUTSTANDING, "max_bond_per_request": MAX_PER_REQUEST}
        config: dict[str, Any] = {
            "database": {"url": database_url},
            "daemon": {"proofs_dir": str(self.tmp_path / "proofs"), "retry_backoff": 0},
            "consensus": {"agent_timeout": 5},
            "metrics": {"enabled": False},
            "agents": [
                {"name": name, "kind": "replay", "directory": str(self.replays)} for name in AGENTS
            ],
            "market_sources": [
                {
                    "kind": "uma",
                    "name": SOURCES[venue],
                    "chain": "local",
                    "oracle_address": self.stacks[venue].optimistic_oracle,
                    "requesters": [self.requesters[venue]],
                    "risk": risk,
                }
                for venue in (0, 1)
            ],
            "chains": [
                {
                    "name": "local",
                    "chain_id": 31337,
                    "rpc": {"urls": [self.anvil.url]},
                    "signer": {"type": "dev_private_key", "dev_private_key": OUR_KEY},
                    "tx": {"confirmations": 1, "poll_interval": 0.05},
                    "scanner": {"confirmations": 0},
                }
            ],
        }
        path = self.tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return load_settings(path)

    def proposed(self, market_id: str) -> bool:
        oracle_address, key = self.keys[market_id]

        async def run() -> Any:
            async with manager_for(self.anvil.url) as reader:
                return await OptimisticOracleV2(reader.pool, oracle_address).get_request(key)

        view = asyncio.run(run())
        return bool(view.state == RequestState.PROPOSED and view.proposer.lower() == OURS.lower())


SOURCES = ("uma-a", "uma-b")


def test_concurrent_bonds_on_two_venues_share_one_signers_budget(
    anvil: Anvil, tmp_path: Path, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Six requests with bond + final fee of 105 (three per deployment) and one of 205,
    delivered at once; both venues cap bonds outstanding at 250 and one request's at 150.
    Together the signer may have two bonds out (210), so exactly two proposals are made
    and the five others refused, each counted (`oracle_bond_refusals_total`) and logged
    (`uma.bond_refused`); nothing above the caps is ever on chain.

    This fails if each venue had a budget of its own: each would post two bonds (420 at
    stake in all), as it did when the bond ledger was temporarily keyed by venue.
    """
    world = TwoDeployments(anvil, tmp_path)
    markets = [
        world.ask(venue, f"Did event {venue}-{n} happen?") for venue in (0, 1) for n in range(3)
    ]
    too_big = world.ask(1, "Did the big event happen?", bond=200 * WHOLE)
    settings = world.config(database_url)
    metrics = DaemonMetrics()
    caplog.set_level(logging.WARNING, logger="oracle")

    one_pass(settings, metrics)

    proposed = [m for m in [*markets, too_big] if world.proposed(m)]
    assert too_big not in proposed
    at_stake = len(proposed) * (BOND + FINAL_FEE)
    assert at_stake <= MAX_OUTSTANDING * WHOLE, f"{len(proposed)} bonds of 105 on chain"
    assert len(proposed) == 2
    refusals = {
        (source, reason): gauge(metrics, "oracle_bond_refusals_total", venue=source, reason=reason)
        or 0
        for source in SOURCES
        for reason in ("outstanding_cap", "per_request_cap")
    }
    assert sum(v for (_, reason), v in refusals.items() if reason == "outstanding_cap") == 4
    assert refusals[("uma-b", "per_request_cap")] == 1
    assert refusals[("uma-a", "per_request_cap")] == 0
    for source in SOURCES:  # both on the one chain, as the metrics say
        assert gauge(metrics, "oracle_source_chain", source=source, chain="local") == 1
    logged = [r for r in caplog.records if "uma.bond_refused" in r.getMessage()]
    assert len(logged) == 5
    store = open_store(settings)
    try:
        for market_id in [*markets, too_big]:
            if market_id in proposed:
                continue
            assert store.get_market(market_id).state == MarketState.FAILED_RETRY
            assert "bond refused" in store.audit(market_id)[-1].reason
        # Both venues' markets are on the one configured chain.
        assert {store.get_market(m).chain for m in markets} == {"local"}
    finally:
        store.engine.dispose()
    # Another pass changes nothing: the two bonds on chain still count for both venues.
    one_pass(settings, metrics)
    assert [m for m in [*markets, too_big] if world.proposed(m)] == proposed


def test_the_venues_of_one_chain_share_its_pool_and_transaction_manager(
    anvil: Anvil, tmp_path: Path
) -> None:
    """One chain context: both venues get the same pool and manager (one nonce sequence
    for the signer); one venue closing leaves the chain open for the other."""
    world = TwoDeployments(anvil, tmp_path)
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}")

    async def run() -> None:
        assembly = assemble(settings)
        try:
            await assembly.daemon.start()
            first, second = assembly.daemon.sources
            assert isinstance(first, UmaVenue)
            assert isinstance(second, UmaVenue)
            one, other = first._chain.parts, second._chain.parts
            assert one is not None
            assert other is not None
            assert one.manager is other.manager
            assert one.pool is other.pool
            assert one.oracle.address != other.oracle.address  # each its own contract
            await first.aclose()
            assert await second.now() > 0  # the chain is still open for the other venue
        finally:
            await assembly.close()

    asyncio.run(run())
