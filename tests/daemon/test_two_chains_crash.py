"""The two-chain daemon (`test_two_chains_e2e`) killed with SIGKILL while it delivers on
both chains, then restarted: every market is answered exactly once on its chain, no
transaction reverts, each signer's nonces run without a gap or a repeat, and the
transactions a killed process left in flight are the ones that carried the answers."""

from __future__ import annotations

import signal
from collections.abc import Collection
from pathlib import Path

from sqlmodel import select

from oracle.app import open_store
from oracle.chain.intents import Intent, IntentState
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.store.tables import TxIntentRow

from ..anvil import DEV_ADDRESSES, Anvil, AnvilFactory
from .chain_world import REPORTER_SLOTS, ask_questions, start_daemon
from .test_crash import ANSWERED
from .test_reality_e2e import INITIAL
from .test_restart_transactions import pending_hashes, wait_for
from .test_two_chains_e2e import OTHER_CHAIN_ID, two_chains
from .test_uma_e2e import AGREED, OURS
from .venue_world import CRASH_DAEMON

REPORTER = DEV_ADDRESSES[REPORTER_SLOTS[0]]
# A killed process holds the poll job for 3 x the watch interval: a short one, so that a
# restart finds the questions asked meanwhile at once.
DAEMON = {**CRASH_DAEMON, "watch_interval": 1}
Signers = tuple[tuple[Anvil, str], ...]  # each chain's node and the signer on it


def mined_nonces(anvil: Anvil, sender: str) -> list[int]:
    """The nonces of `sender`'s transactions on the canonical chain, in block order."""
    return [
        int(anvil.rpc("eth_getTransactionByHash", receipt["transactionHash"])["nonce"], 16)
        for receipt in anvil.receipts_in_chain()
        if receipt["from"].lower() == sender.lower()
    ]


def stored_intents(config: Path) -> list[Intent]:
    store = open_store(load_settings(config))
    try:
        with store.reading() as session:
            return [Intent.model_validate(row.data) for row in session.exec(select(TxIntentRow))]
    finally:
        store.engine.dispose()


def market_states(config: Path) -> dict[str, str]:
    store = open_store(load_settings(config))
    try:
        return {m.id: m.state for m in store.markets()}
    finally:
        store.engine.dispose()


def kill_with_both_in_flight(
    config: Path, log: Path, signers: Signers, seen: Collection[str] = ()
) -> set[str]:
    """Run the daemon with mining off on both chains and SIGKILL it once each chain's
    signer has broadcast a transaction (not one of `seen`) that is not mined; the hashes
    of the transactions it left in the pools. Mining stays off."""
    for anvil, _ in signers:
        anvil.rpc("evm_setAutomine", False)
    daemon = start_daemon(config, log)
    try:
        wait_for(
            lambda: all(
                set(pending_hashes(anvil, signer)) - set(seen) for anvil, signer in signers
            ),
            60,
            "a transaction broadcast on each chain",
        )
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(timeout=10)
    return {h for anvil, signer in signers for h in pending_hashes(anvil, signer)}


def mine_on(signers: Signers) -> None:
    """Mining on again: what waits in the pools is mined at once."""
    for anvil, _ in signers:
        anvil.rpc("evm_setAutomine", True)
        anvil.mine()


def run_until_all_answered(config: Path, log: Path, markets: list[str]) -> None:
    """Restart the daemon, wait until every market is answered and every intent ended,
    and stop it as an operator would (SIGTERM: exit 0)."""
    survivor = start_daemon(config, log)
    try:
        wait_for(
            lambda: (
                market_states(config).keys() == set(markets)
                and set(market_states(config).values()) <= ANSWERED
            ),
            60,
            "every market answered",
        )
        wait_for(
            lambda: all(intent.final for intent in stored_intents(config)),
            30,
            "every intent to end",
        )
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)
    assert survivor.returncode == 0, log.read_text()[-3000:]


def assert_each_signers_nonces_run_without_gap(signers: Signers) -> None:
    """No transaction reverted; each signer's mined nonces are 0, 1, 2, ... (no gap, none
    twice) and nothing of it waits in the pool."""
    for anvil, signer in signers:
        receipts = anvil.receipts_in_chain()
        assert [r["transactionHash"] for r in receipts if int(r["status"], 16) != 1] == []
        nonces = mined_nonces(anvil, signer)
        assert sorted(nonces) == list(range(len(nonces))), nonces
        assert anvil.nonce(signer) == len(nonces)
        assert pending_hashes(anvil, signer) == []


def test_sigkill_while_delivering_on_both_chains_answers_every_market_once(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    chains = two_chains(anvil_factory, tmp_path)
    own_ids = ask_questions(chains.own, 6)  # two batches
    uma_ids = [
        chains.uma.ask(f"Did launch {n} happen before the deadline?", AGREED) for n in (0, 1)
    ]
    reality_ids = [chains.reality.ask(f"Did bridge {n} open in May?", AGREED) for n in (0, 1, 2)]
    markets = [*(f"own:{qid}" for qid in own_ids), *uma_ids, *reality_ids]
    database = f"sqlite:///{tmp_path / 'oracle.db'}"
    config = chains.config(database, daemon=DAEMON)
    log = tmp_path / "daemon.log"
    signers: Signers = ((chains.home, REPORTER), (chains.other, OURS))

    # Killed during the first deliveries on both chains; then, once those are mined and
    # more own questions asked, during the restarted process's next deliveries.
    in_flight = kill_with_both_in_flight(config, log, signers)
    mine_on(signers)
    later = ask_questions(chains.own, 3)
    own_ids += later
    markets += [f"own:{qid}" for qid in later]
    chains.config(database, daemon=DAEMON)  # their recordings, for the agents
    in_flight |= kill_with_both_in_flight(config, log, signers, seen=in_flight)
    mine_on(signers)
    for anvil, _ in signers:
        anvil.rpc("evm_setIntervalMining", 1)
    run_until_all_answered(config, log, markets)

    # Exactly once, each on its own chain.
    assert chains.own.proposals() == dict.fromkeys(own_ids, 1)
    assert {m: chains.uma.proposals(m) for m in uma_ids} == dict.fromkeys(uma_ids, 1)
    for market_id in reality_ids:
        assert [(a, bond) for a, bond, _ in chains.reality.history(market_id)] == [(OURS, INITIAL)]
    assert_each_signers_nonces_run_without_gap(signers)
    # Every intent ended on chain or was found done, each by its chain's signer; what was
    # in flight when a process died carried its intent (resumed, not signed again).
    intents = stored_intents(config)
    assert {i.state for i in intents} <= {IntentState.CONFIRMED, IntentState.SKIPPED}
    assert {(i.chain_id, i.sender.lower()) for i in intents} == {
        (31337, REPORTER.lower()),
        (OTHER_CHAIN_ID, OURS.lower()),
    }
    carriers = {i.inclusion.tx_hash for i in intents if i.inclusion is not None}
    assert in_flight <= carriers, (in_flight, carriers)
    assert set(market_states(config).values()) <= {MarketState.SUBMITTED, MarketState.FINAL}
