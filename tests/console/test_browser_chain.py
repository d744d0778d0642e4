"""The console end to end on a real anvil, in a real browser: the daemon escalates a
question asked on-chain; a reviewer signs in, reads the evidence and decides INVALID; an
approver approves; the daemon proposes the decision on-chain, and the proof hash on-chain
is the decision proof's."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from oracle.app import open_store
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.core.proof import verify_proof
from tests.anvil import Anvil
from tests.daemon.test_chain_e2e import (
    CONTESTED,
    one_pass,
    oracle_cli,
    question_status,
    write_config,
)

from .helpers import PASSWORD, browser_sign_in, console_server
from .test_browser import CHROMIUM, pytestmark  # noqa: F401 (skips without chromium)


def decide_invalid_and_approve(base: str) -> None:
    """rita reads the contested question's evidence and decides INVALID; ann approves."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        browser_sign_in(page, base, "rita")
        page.click(f"text={CONTESTED}")
        page.wait_for_selector("form.decide")
        evidence = page.inner_text("main")
        assert "alpha" in evidence
        assert "beta" in evidence
        assert "verifies" in evidence
        page.check("input[name=outcome][value=INVALID]")
        page.fill("textarea[name=reason]", "The federation has not published a result.")
        page.check("input[name=confirm]")
        page.click("form.decide button[type=submit]")
        page.wait_for_selector("text=awaiting approval")
        page.click("header form.who button")
        browser_sign_in(page, base, "ann")
        page.goto(f"{base}/approvals")
        page.click("table.queue button:has-text('Approve')")
        page.wait_for_selector("text=approved by ann")
        browser.close()


def test_a_decision_made_and_approved_in_the_browser_is_proposed_with_its_proof(
    anvil: Anvil, tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'oracle.db'}"
    config = write_config(tmp_path, anvil, database_url)
    oracle_cli(config, "chain", "deploy", "--min-liveness", "60")
    past = str(int(time.time()) - 60)
    asked = oracle_cli(
        config, "chain", "ask", "--question", CONTESTED, "--resolve-after", past, "--liveness", "60"
    )
    question_id = json.loads(asked)["question_id"]
    market_id = f"chain:{question_id}"
    settings = load_settings(config)
    asyncio.run(one_pass(settings))  # researched, contested: a person decides
    store = open_store(settings)
    try:
        assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
        [item] = store.reviews()
        store.add_user("rita", "reviewer", PASSWORD)
        store.add_user("ann", "approver", PASSWORD)

        with console_server(database_url, tmp_path) as base:
            decide_invalid_and_approve(base)

        # Nothing went on-chain before the approval; the next pass proposes it.
        assert question_status(config, question_id)["status"] == "REQUESTED"
        asyncio.run(one_pass(settings))
        market = store.get_market(market_id)
        assert (market.state, market.decided_outcome) == (MarketState.SUBMITTED, "INVALID")
        on_chain = question_status(config, question_id)
        assert on_chain["outcome_name"] == "INVALID"
        assert market.proof_checksum is not None
        assert on_chain["proof_hash"] == "0x" + market.proof_checksum[:40]
        proof_file = tmp_path / "proofs" / f"chain_{question_id}" / f"{market.proof_checksum}.json"
        proof = json.loads(proof_file.read_text())
        assert verify_proof(proof) == (True, market.proof_checksum)
        assert proof["kind"] == "human_decision"
        decision = proof["decision"]
        assert (decision["outcome"], decision["decided_by"]) == ("INVALID", "rita")
        assert decision["approved_by"] == "ann"
        assert store.review(item.id).approved_by == "ann"
        assert all(int(r["status"], 16) == 1 for r in anvil.receipts_in_chain())
    finally:
        store.engine.dispose()
