"""One bond budget per signer, across replicas: two daemon replicas on one PostgreSQL
database, each with its own transaction manager but the same signer, deliver bonded
proposals on two OOv2 deployments (one bond currency) at the same time.

Each replica weighs a bond against what it reads of the budget before it signs (the
venue's check) and again when it records the intent (the database's reservation, under a
row lock on the signer's budget). Only the second holds across replicas: both replicas'
checks can read the same free room at once.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
import yaml
from sqlalchemy import text

from oracle.app import assemble, open_store
from oracle.config import Settings, load_settings
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.store.engine import make_engine
from oracle.venues.uma.venue import UmaVenue

from ..anvil import Anvil
from ..conftest import empty_postgres_database
from .test_shared_bond_budget import MAX_OUTSTANDING, SOURCES, WHOLE, TwoDeployments
from .test_uma_e2e import BOND, FINAL_FEE
from .venue_world import gauge

REPLICAS = ("replica-a", "replica-b")
REASONS = ("outstanding_cap", "per_request_cap")


def replica_settings(world: TwoDeployments, database_url: str, replica: str) -> Settings:
    """The world's daemon settings, as the replica `replica` (its own config file)."""
    world.config(database_url)
    config = yaml.safe_load((world.tmp_path / "config.yaml").read_text())
    # A replica that asked for work within 3 x this (+ 1 s) gets its share of it.
    config["daemon"].update(replica_id=replica, dispatch_interval=10)
    # A standing allowance: with exact approvals, two managers of one key overwrite each
    # other's allowance slot (each replica approves 105, one proposal takes it, the other
    # reverts), why docs/daemon.md gives each replica its own key.
    for source in config["market_sources"]:
        source["risk"]["bond_allowance"] = 1000
    path = world.tmp_path / f"{replica}.yaml"
    path.write_text(yaml.safe_dump(config))
    return load_settings(path)


def reservations_ever(database_url: str) -> list[int]:
    """Every bond ever reserved in the database (released or not): a bond is reserved
    before its transaction is signed, so while nothing is paid back or reverts, what the
    signer had on chain or reserved at any moment is at most their sum."""
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return [
                int(amount)
                for amount in connection.execute(text("SELECT amount FROM bond_reservation"))
                .scalars()
                .all()
            ]
    finally:
        engine.dispose()


def intent_states(database_url: str) -> list[str]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(text("SELECT state FROM tx_intent")).scalars())
    finally:
        engine.dispose()


def deliver_at_once(settings: list[Settings], metrics: list[DaemonMetrics]) -> None:
    """Both replicas started and known to each other as asking for work (so each takes
    its share of what is due); the markets found and made due by the first (polling and
    promoting are singleton jobs: a replica's pass does neither while the other holds
    the job); then one daemon pass each, at the same time."""

    async def run() -> None:
        assemblies = [assemble(s, metrics=m) for s, m in zip(settings, metrics, strict=True)]
        try:
            for assembly in assemblies:
                await assembly.daemon.start()
                await assembly.daemon.dispatch()  # nothing due yet: registers the replica
            first = assemblies[0].daemon
            await first.poll()
            await first.promote()
            managers = {
                id(source._chain.parts.manager)
                for assembly in assemblies
                for source in assembly.daemon.sources
                if isinstance(source, UmaVenue) and source._chain.parts is not None
            }
            assert len(managers) == 2, "one transaction manager per replica"
            await asyncio.gather(*(a.daemon.run_once() for a in assemblies))
        finally:
            for assembly in assemblies:
                await assembly.close()

    asyncio.run(run())


def test_two_replicas_on_postgresql_share_one_signers_bond_budget(
    anvil: Anvil, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    """Eight requests with bond + final fee of 105 (four per deployment) and one of 205,
    delivered by two replicas at once; caps: 250 outstanding, 150 a request. Together the
    signer may have two bonds out (210): exactly two proposals, whichever replica made
    them; the seven others are refused, each counted by the replica that refused it
    (`oracle_bond_refusals_total`) and logged (`uma.bond_refused`).

    Without the database weighing the reservation (each replica weighing only what it
    read before signing; `weigh_holds` patched out), this failed three runs out of three:
    the replicas together put three bonds (315) on chain."""
    world = TwoDeployments(anvil, tmp_path)
    markets = [
        world.ask(venue, f"Did event {venue}-{n} happen?") for venue in (0, 1) for n in range(4)
    ]
    too_big = world.ask(1, "Did the big event happen?", bond=200 * WHOLE)
    database_url = empty_postgres_database(request)
    settings = [replica_settings(world, database_url, replica) for replica in REPLICAS]
    metrics = [DaemonMetrics() for _ in REPLICAS]
    caplog.set_level(logging.WARNING, logger="oracle")

    deliver_at_once(settings, metrics)

    proposed = [m for m in [*markets, too_big] if world.proposed(m)]
    assert too_big not in proposed
    assert len(proposed) * (BOND + FINAL_FEE) <= MAX_OUTSTANDING * WHOLE, proposed
    assert len(proposed) == 2
    assert "reverted" not in intent_states(database_url)
    assert sum(reservations_ever(database_url)) <= MAX_OUTSTANDING * WHOLE
    assert reservations_ever(database_url) == [BOND + FINAL_FEE] * 2
    refusals = {
        (replica, source, reason): gauge(
            replica_metrics, "oracle_bond_refusals_total", venue=source, reason=reason
        )
        or 0
        for replica, replica_metrics in zip(REPLICAS, metrics, strict=True)
        for source in SOURCES
        for reason in REASONS
    }
    by_reason = {
        reason: sum(v for (_, _, why), v in refusals.items() if why == reason) for reason in REASONS
    }
    assert by_reason == {"outstanding_cap": 6, "per_request_cap": 1}, refusals
    logged = [r for r in caplog.records if "uma.bond_refused" in r.getMessage()]
    assert len(logged) == 7
    store = open_store(settings[0])
    try:
        for market_id in [*markets, too_big]:
            market = store.get_market(market_id)
            if market_id in proposed:
                assert market.state == MarketState.SUBMITTED
                continue
            assert market.state == MarketState.FAILED_RETRY
            assert "bond refused" in store.audit(market_id)[-1].reason
        # Both replicas delivered: the work was divided between them.
        deliverers = {entry.actor for m in markets for entry in store.audit(m)}
        assert set(REPLICAS) <= deliverers, deliverers
    finally:
        store.engine.dispose()
