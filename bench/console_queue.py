"""The review console's first page with a long queue: `oracle console serve` over a
database holding N items awaiting a person (5,000 by default), timed in Debian's chromium
(Playwright) from navigation to the page's `load` event, and the server's answer alone.

    .venv/bin/python bench/console_queue.py [--items 5000] [--runs 7]

Prints the median and the worst of the runs for each. The queue is paginated on the
server (console.page_size, 50), so the figure should not grow with N."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright
from sqlalchemy import update

import oracle
from oracle.core.lifecycle import MarketState
from oracle.core.markets import MarketSpec
from oracle.devchain import free_port
from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.store.reviews import insert_review
from oracle.store.tables import MarketRow

# The server runs the package this script imported (the same schema on both sides).
PACKAGE_ROOT = Path(oracle.__file__).resolve().parents[1]
PASSWORD = "correct horse battery"


def fill(store: Store, count: int, now: float) -> None:
    """`count` markets waiting for a person, deadlines spread over two days."""
    specs = [
        MarketSpec(
            source=("uma", "reality", "omen")[i % 3],
            external_id=f"bench-{i:05d}",
            question=f"Will benchmark event number {i} happen before the deadline?",
            resolve_after=now - 86_400 + ((i * 7919) % count) * 60.0,
        )
        for i in range(count)
    ]
    store.add_discovered(specs, actor="bench")
    table = MarketRow.__table__  # type: ignore[attr-defined]
    ids = [spec.market_id for spec in specs]
    with store.engine.begin() as connection:
        connection.execute(
            update(table)
            .where(table.c.id.in_(ids))
            .values(state=MarketState.NEEDS_REVIEW.value, state_changed_at=now)
        )
        for i, market_id in enumerate(ids):
            insert_review(connection, market_id, None, ["no quorum"], now - i)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite:///{Path(directory) / 'oracle.db'}"
        store = Store(open_database(url, create=True))
        store.add_user("rita", "reviewer", PASSWORD)
        started = time.perf_counter()
        fill(store, args.items, time.time())
        print(f"{args.items} items written in {time.perf_counter() - started:.1f} s")
        port = free_port()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("ORACLE")},
            "ORACLE__DATABASE__URL": url,
            "ORACLE__CONSOLE__PORT": str(port),
            "ORACLE__CONSOLE__SECURE_COOKIES": "false",
            "PYTHONPATH": str(PACKAGE_ROOT),
        }
        log = Path(directory) / "console.log"
        with log.open("w") as output:
            server = subprocess.Popen(
                [sys.executable, "-m", "oracle", "console", "serve"],
                env=env,
                cwd=directory,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"the console did not start:\n{log.read_text()}")
                    time.sleep(0.2)
            browser_times, server_times = measure(base, args.runs)
        finally:
            server.terminate()
            server.wait(timeout=30)
    for name, times in (("browser, to load", browser_times), ("server, GET /", server_times)):
        print(
            f"first page of {args.items} items, {name}: median {statistics.median(times):.0f} ms,"
            f" worst {max(times):.0f} ms ({len(times)} runs)"
        )


def measure(base: str, runs: int) -> tuple[list[float], list[float]]:
    browser_times: list[float] = []
    server_times: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/login")
        page.fill("input[name=name]", "rita")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("table.queue")
        for _ in range(runs):
            started = time.perf_counter()
            page.goto(f"{base}/", wait_until="load")
            browser_times.append((time.perf_counter() - started) * 1000)
            server_times.append(
                page.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return n.responseEnd - n.requestStart; })()"
                )
            )
        browser.close()
    return browser_times, server_times


if __name__ == "__main__":
    main()
