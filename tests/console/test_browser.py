"""The console in a real browser (Playwright driving Debian's chromium) against
`oracle console serve`: a reviewer signs in, reads the evidence and decides INVALID; it
waits for a second person; an approver approves it. Screenshots of the queue, the
evidence and the approval page go to docs/console/."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

from oracle.console.app import same_origin_path
from oracle.core.lifecycle import MarketState
from oracle.core.models import AgentFailure, AgentResult
from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.testing import result, source_dicts

from .helpers import PASSWORD, browser_sign_in, console_server
from .redirects import HOSTILE_NEXT, LOCAL_NEXT
from .scenario import escalate

CHROMIUM = Path("/usr/bin/chromium")
# The screenshots in docs/console/ are refreshed with ORACLE_CONSOLE_SCREENSHOTS=1; an
# ordinary run takes them into its temporary directory, leaving the checkout alone.
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed at /usr/bin/chromium "
    "(scripts/test installs it: apt-get install chromium)",
)

QUESTION = "Did the Federal Reserve cut its policy rate at the September 2026 meeting?"


def _agent(agent_id: str, outcome: str, confidence: float, family: str, **kw: Any) -> AgentResult:
    provider = "anthropic" if family == "claude" else "openai"
    return result(agent_id, outcome, confidence, **kw).model_copy(
        update={"provider": provider, "model_family": family}
    )


def _answers() -> list[AgentResult]:
    official = source_dicts("fomc-statement", 4, credibility=0.95)
    return [
        _agent(
            "claude-researcher",
            "YES",
            0.82,
            "claude",
            shared=official,
            reasoning=(
                "The FOMC statement of 17 September 2026 lowers the target range by 25 basis "
                "points, to 4.00-4.25%. Wire reports and the implementation note agree."
            ),
        ),
        _agent(
            "gpt-researcher",
            "YES",
            0.77,
            "gpt",
            shared=official,
            reasoning="The implementation note sets the interest on reserve balances 25 bp lower.",
        ),
        _agent(
            "llama-researcher",
            "NO",
            0.74,
            "llama",
            reasoning=(
                "The statement says the Committee 'will consider' a cut; the only change on "
                "17 September was to the discount rate, not the federal funds target."
            ),
        ),
        _agent(
            "mistral-researcher",
            "NO",
            0.66,
            "mistral",
            reasoning="Market commentary expected a cut in October, not September.",
        ),
    ]


@pytest.fixture
def console(tmp_path: Path) -> Iterator[tuple[str, Store, int]]:
    url = f"sqlite:///{tmp_path / 'oracle.db'}"
    store = Store(open_database(url, create=True))
    store.add_user("rita", "reviewer", PASSWORD)
    store.add_user("ann", "approver", PASSWORD)
    review_id = escalate(
        store,
        "fed-cut-2026-09",
        _answers(),
        [AgentFailure(agent_id="data-feed", error="HTTP 503 from the rates API")],
        question=QUESTION,
        resolve_after=time.time() - 3 * 3600,
    )
    with console_server(url, tmp_path) as base:
        yield base, store, review_id


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    return DOCS_SCREENSHOTS if os.environ.get("ORACLE_CONSOLE_SCREENSHOTS") else tmp_path


def test_a_reviewer_decides_and_an_approver_approves_in_a_browser(
    console: tuple[str, Store, int], screenshots: Path
) -> None:
    base, store, review_id = console
    csp_violations: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on(
            "console",
            lambda message: (
                csp_violations.append(message.text)
                if "Content Security Policy" in message.text
                else None
            ),
        )

        browser_sign_in(page, base, "rita")
        page.wait_for_selector("table.queue")
        assert QUESTION in page.inner_text("table.queue")
        page.screenshot(path=str(screenshots / "queue.png"), full_page=True)
        # Live updates: a claim made elsewhere shows without touching the page.
        page.wait_for_timeout(1000)  # the stream's first event (the queue as loaded)
        store.claim_review(review_id, "ann", assignee="ann")
        page.wait_for_selector("table.queue td:has-text('ann')", timeout=15_000)
        store.claim_review(review_id, "ann", assignee=None)
        page.wait_for_selector("table.queue button:has-text('Claim')", timeout=15_000)

        page.click(f"text={QUESTION}")
        page.wait_for_selector("form.decide")
        body = page.inner_text("main")
        for expected in (
            "lowers the target range by 25 basis points",  # full reasoning, each side
            "the only change on 17 September was to the discount rate",
            "data-feed failed: HTTP 503 from the rates API",
            "verifies",
            "gpt-researcher openai / family gpt",
        ):
            assert expected in body, expected
        page.screenshot(path=str(screenshots / "evidence.png"), full_page=True)
        page.click("summary:has-text('Sources supporting NO')")  # long lists start folded
        assert "only NO" in page.inner_text("section.outcome:has-text('llama-researcher')")

        page.check("input[name=outcome][value=INVALID]")
        page.fill("textarea[name=reason]", "The statement is ambiguous about the target range.")
        page.click("form.decide button[type=submit]")  # the confirmation is still unticked
        assert page.url.endswith(f"/reviews/{review_id}")  # the browser refused to submit
        page.check("input[name=confirm]")
        page.click("form.decide button[type=submit]")
        page.wait_for_selector("text=awaiting approval")
        assert store.get_market("chain:fed-cut-2026-09").state == MarketState.NEEDS_REVIEW

        page.click("header form.who button")
        browser_sign_in(page, base, "ann")
        page.goto(f"{base}/approvals")
        page.wait_for_selector("text=INVALID is decided")
        page.screenshot(path=str(screenshots / "approvals.png"), full_page=True)
        page.click("table.queue button:has-text('Approve')")
        page.wait_for_selector("text=approved by ann")
        browser.close()

    market = store.get_market("chain:fed-cut-2026-09")
    assert (market.state, market.decided_outcome) == (MarketState.REVIEWED, "INVALID")
    item = store.review(review_id)
    assert (item.decided_by, item.approved_by) == ("rita", "ann")
    assert csp_violations == []
    assert store.verify_audit() == []
    assert all(
        (screenshots / f"{name}.png").stat().st_size > 10_000
        for name in ("queue", "evidence", "approvals")
    )


def test_chromium_reads_every_redirect_after_sign_in_as_a_path_on_the_console() -> None:
    """The redirect check against a browser's own URL parser: what the console sends
    stays on its origin, with no path a browser could take for another host; and the
    variants an older check let through (tab, newline, dot segments) leave it."""
    origin = "https://console.example"
    resolve = """([target, base]) => {
        const url = new URL(target, base);
        return [url.origin, url.pathname];
    }"""
    let_through_before = [
        "/\t/evil.example/",
        "/\n/evil.example/",
        "/\r\n/evil.example/",
        "/..//evil.example/",
        "/%2e%2e//evil.example/",
        "/x/.%2E//evil.example/",
    ]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page()
        for target in (*HOSTILE_NEXT, *LOCAL_NEXT):
            sent = same_origin_path(target)
            where, path = page.evaluate(resolve, [sent, f"{origin}/login"])
            assert (where, path.startswith("//")) == (origin, False), (target, sent, where, path)
        for target in let_through_before:
            assert target in HOSTILE_NEXT
            where, path = page.evaluate(resolve, [target, f"{origin}/login"])
            assert where != origin or path.startswith("//"), (target, where, path)
        browser.close()
