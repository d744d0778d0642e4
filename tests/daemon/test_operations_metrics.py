"""The metrics operators of on-chain services look for first, each through its real path:
the signer's balance and the RPC nodes on anvil, the pending transactions and their
replacements from a transaction manager on the daemon's database, the review queue's
oldest item, the process and the build. Each test builds its own registry."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest
from web3.exceptions import Web3RPCError

from oracle import __version__
from oracle.app import Assembly, assemble
from oracle.chain.fees import GWEI
from oracle.chain.intents import IntentState
from oracle.chain.rpc import RpcPool
from oracle.chain.txmanager import TxRequest
from oracle.config import Settings, config_checksum, load_settings
from oracle.core.lifecycle import MarketEvent
from oracle.core.markets import MarketSpec
from oracle.core.urls import redact_url
from oracle.daemon.metrics import DaemonMetrics
from oracle.devchain import free_port
from oracle.store.intents import DatabaseIntentStore

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from ..chain.helpers import FAST_RPC, RECIPIENT, manager_for, mining
from .chain_world import REPORTER_SLOTS, build_world, daemon_config

API_KEY = "4f0c1e2d3b4a59687766554433221100"


def value(metrics: DaemonMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def quiet_settings(tmp_path: Path, **extra: Any) -> Settings:
    """A daemon with no venue and no agent: only its housekeeping is exercised."""
    return Settings(
        database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        daemon={"proofs_dir": str(tmp_path / "proofs")},
        metrics={"enabled": False},
        **extra,
    )


@contextmanager
def assembled(settings: Settings, metrics: DaemonMetrics, clock: list[float]) -> Iterator[Assembly]:
    assembly = assemble(settings, metrics=metrics, clock=lambda: clock[0])
    try:
        yield assembly
    finally:
        asyncio.run(assembly.close())


def test_a_chain_daemon_reports_its_signer_balance_its_rpc_nodes_and_its_build(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, questions=1)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    settings = load_settings(config)
    metrics = DaemonMetrics()

    async def one_pass() -> None:
        assembly = assemble(settings, metrics=metrics)
        try:
            await assembly.daemon.run_once()  # proposes the answer, then housekeeps
        finally:
            await assembly.close()

    asyncio.run(one_pass())
    assert world.proposals() == {world.question_ids[0]: 1}
    signer = DEV_ADDRESSES[REPORTER_SLOTS[0]]
    # Read by the housekeeping after the proposal: what the signer has left now.
    balance = value(metrics, "oracle_signer_balance_wei", source="chain", signer=signer)
    assert balance == float(anvil.balance(signer))
    assert value(metrics, "oracle_signer_min_balance_wei") == 5 * 10**16
    assert value(metrics, "oracle_tx_pending") == 0  # every transaction is final
    endpoint = redact_url(anvil.url)
    assert value(metrics, "oracle_rpc_call_seconds_count", endpoint=endpoint) >= 5
    assert value(metrics, "oracle_rpc_call_errors_total", endpoint=endpoint) == 0
    build = {"version": __version__, "commit": os.environ.get("ORACLE_COMMIT") or "unknown"}
    build["config_checksum"] = config_checksum(settings)
    assert value(metrics, "oracle_build_info", **build) == 1
    exposition = generate_latest(metrics.registry).decode()
    # The signer's key never shows, in the checksum's input or anywhere else.
    assert DEV_KEYS[REPORTER_SLOTS[0]].removeprefix("0x") not in exposition
    for process_metric in ("process_resident_memory_bytes", "process_open_fds", "python_info"):
        assert process_metric in exposition


def test_rpc_calls_are_timed_and_failures_counted_per_endpoint_without_credentials(
    anvil: Anvil,
) -> None:
    metrics = DaemonMetrics()
    dead = f"http://reader:hunter2@127.0.0.1:{free_port()}/v3/{API_KEY}"
    live = redact_url(anvil.url)  # no credentials in it: shown as it is
    assert live == anvil.url

    async def run() -> None:
        async with RpcPool([dead, anvil.url], FAST_RPC, observer=metrics) as pool:
            for _ in range(3):
                await pool.call("eth_blockNumber", lambda w3: w3.eth.block_number)
            with pytest.raises(Web3RPCError):  # the node refused the request: an answer
                await pool.request("oracle_noSuchMethod")

    asyncio.run(run())
    dead_name = redact_url(dead)
    assert dead_name.startswith("http://***@127.0.0.1:")
    assert dead_name.endswith("/v3/***")
    assert value(metrics, "oracle_rpc_call_errors_total", endpoint=dead_name) >= 1
    assert value(metrics, "oracle_rpc_call_errors_total", endpoint=live) == 0
    # The start's probe, three block numbers and the refused request (and any health probe).
    assert value(metrics, "oracle_rpc_call_seconds_count", endpoint=live) >= 5
    assert 0 < value(metrics, "oracle_rpc_call_seconds_sum", endpoint=live) < 5
    exposition = generate_latest(metrics.registry).decode()
    assert "hunter2" not in exposition
    assert API_KEY not in exposition


def test_a_pending_transaction_its_age_and_its_replacements(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    anvil = anvil_factory("--no-mining")
    metrics = DaemonMetrics()
    clock = [time.time()]

    async def run(assembly: Assembly) -> None:
        daemon = assembly.daemon
        intents = DatabaseIntentStore(daemon.store)
        async with manager_for(
            anvil.url, store=intents, max_fee_per_gas_gwei=60, observer=metrics
        ) as manager:
            sent = await manager.send(TxRequest(key="transfer", to=RECIPIENT, value=4))
            clock[0] = sent.created_at + 600  # not mined for ten minutes: stuck
            await daemon.housekeep()
            assert value(metrics, "oracle_tx_pending") == 1
            assert value(metrics, "oracle_tx_oldest_pending_age_seconds") == pytest.approx(600)
            assert value(metrics, "oracle_tx_replacements_total") == 0

            # The base fee jumps above what it offered: it is replaced with higher fees.
            anvil.rpc("anvil_setNextBlockBaseFeePerGas", hex(20 * GWEI))
            async with mining(anvil, 0.15):
                final = await manager.wait("transfer")
            assert final.state == IntentState.CONFIRMED
            replacements = len(final.attempts) - 1
            assert replacements >= 1
            assert value(metrics, "oracle_tx_replacements_total") == replacements
            await daemon.housekeep()
            assert value(metrics, "oracle_tx_pending") == 0
            assert value(metrics, "oracle_tx_oldest_pending_age_seconds") == 0

    with assembled(quiet_settings(tmp_path), metrics, clock) as assembly:
        asyncio.run(run(assembly))
    assert anvil.balance(RECIPIENT) == 4


def test_the_oldest_open_review_items_age(tmp_path: Path) -> None:
    metrics = DaemonMetrics()
    clock = [1_000.0]
    with assembled(quiet_settings(tmp_path), metrics, clock) as assembly:
        daemon, store = assembly.daemon, assembly.daemon.store

        def hand_over(external_id: str) -> int:
            spec = MarketSpec(
                source="venue", external_id=external_id, question="Did it?", resolve_after=0
            )
            [market_id] = store.add_discovered([spec], actor="test")
            for event in (MarketEvent.DUE, MarketEvent.RESEARCH_STARTED, MarketEvent.FAILED):
                store.apply_event(market_id, event, actor="test")
            _, review_id = store.hand_to_person(
                market_id, MarketEvent.RETRIES_EXHAUSTED, actor="test", reasons=["gave up"]
            )
            return review_id

        asyncio.run(daemon.housekeep())
        assert value(metrics, "oracle_review_oldest_open_age_seconds") == 0  # none open
        first = hand_over("a")
        clock[0] = 1_600.0
        hand_over("b")
        clock[0] = 4_600.0
        asyncio.run(daemon.housekeep())
        assert value(metrics, "oracle_reviews_open") == 2
        assert value(metrics, "oracle_review_oldest_open_age_seconds") == 3_600
        store.decide_review(first, "INVALID", "unclear", "alice")  # awaits an approver
        asyncio.run(daemon.housekeep())
        assert value(metrics, "oracle_reviews_open") == 2  # still waits for a person
        assert value(metrics, "oracle_review_oldest_open_age_seconds") == 3_600
        store.add_user("bob", "approver", "correct horse battery")
        store.approve_review(first, "bob")  # the oldest is decided
        asyncio.run(daemon.housekeep())
        assert value(metrics, "oracle_review_oldest_open_age_seconds") == 3_000


def test_the_config_checksum_changes_with_the_config_and_shows_no_secret(
    tmp_path: Path,
) -> None:
    def with_rpc(url: str) -> Settings:
        return quiet_settings(tmp_path, chain={"rpc": {"urls": [url]}})

    secret_url = f"https://rpc.example/v3/{API_KEY}"
    other_key = secret_url.replace(API_KEY, "0" * len(API_KEY))
    checksums = {config_checksum(quiet_settings(tmp_path)), config_checksum(with_rpc(secret_url))}
    assert len(checksums) == 2
    assert all(len(c) == 12 and int(c, 16) >= 0 for c in checksums)
    # Computed from the masked configuration: a key that differs does not show through.
    assert config_checksum(with_rpc(secret_url)) == config_checksum(with_rpc(other_key))


def test_each_rpc_node_shows_whether_it_is_usable_and_its_head_age_without_credentials(
    anvil: Anvil,
) -> None:
    """The pool's health checks set `oracle_rpc_node_up` and the head age per node: the
    age is the wall clock minus the latest block's timestamp, growing between checks and
    starting again from a new block; a node that never answered has no age."""
    wall = [0.0]
    metrics = DaemonMetrics(wall_clock=lambda: wall[0])
    dead = f"http://reader:hunter2@127.0.0.1:{free_port()}/v3/{API_KEY}"

    def latest_timestamp() -> int:
        return int(anvil.rpc("eth_getBlockByNumber", "latest", False)["timestamp"], 16)

    def node(index: int, url: str) -> dict[str, str]:
        return {"chain_id": "31337", "node": str(index), "endpoint": redact_url(url)}

    async def run() -> list[float | None]:
        async with RpcPool([dead, anvil.url], FAST_RPC, observer=metrics) as pool:
            first = latest_timestamp()
            wall[0] = first + 42
            seen = [value(metrics, "oracle_rpc_node_head_age_seconds", **node(1, anvil.url))]
            wall[0] = first + 100  # no new block: the age keeps growing, read at the scrape
            seen.append(value(metrics, "oracle_rpc_node_head_age_seconds", **node(1, anvil.url)))
            anvil.rpc("evm_mine", first + 90)  # a new head, 10 s before the wall clock
            await pool.check_health()
            seen.append(value(metrics, "oracle_rpc_node_head_age_seconds", **node(1, anvil.url)))
            return seen

    assert asyncio.run(run()) == [42.0, 100.0, 10.0]
    assert value(metrics, "oracle_rpc_node_up", **node(1, anvil.url)) == 1
    assert value(metrics, "oracle_rpc_node_up", **node(0, dead)) == 0
    assert value(metrics, "oracle_rpc_node_head_age_seconds", **node(0, dead)) is None
    exposition = generate_latest(metrics.registry).decode()
    assert "hunter2" not in exposition
    assert API_KEY not in exposition
