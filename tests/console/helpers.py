"""The console over a real SQLite store, driven through aiohttp's test client."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from sqlalchemy import delete, update

from oracle.console.app import make_app
from oracle.console.settings import ConsoleSettings
from oracle.core.audit import GENESIS, entry_hash
from oracle.devchain import free_port
from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.store.tables import ConsoleAuditRow

CHECKOUT = Path(__file__).resolve().parents[2]
PASSWORD = "correct horse battery"
ACCOUNTS = {"rita": "reviewer", "ann": "approver", "val": "viewer", "adam": "admin"}
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


class FakeClock:
    """A clock the test moves: waits without sleeping."""

    def __init__(self, now: float = 1_790_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_store(tmp_path: Path, clock: Callable[[], float] = time.time) -> Store:
    store = Store(open_database(f"sqlite:///{tmp_path / 'oracle.db'}", create=True), clock)
    for name, role in ACCOUNTS.items():
        store.add_user(name, role, PASSWORD)
    return store


def local_settings(**overrides: Any) -> ConsoleSettings:
    # The test client speaks plain http to 127.0.0.1: the one case Secure may be off.
    return ConsoleSettings(host="127.0.0.1", secure_cookies=False, **overrides)


def run(
    store: Store,
    scenario: Callable[[TestClient[web.Request, web.Application]], Awaitable[None]],
    settings: ConsoleSettings | None = None,
) -> None:
    async def main() -> None:
        app = make_app(store, settings or local_settings())
        async with TestClient(TestServer(app)) as client:
            await scenario(client)

    asyncio.run(main())


def csrf_of(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


async def sign_in(
    client: TestClient[web.Request, web.Application],
    name: str,
    password: str = PASSWORD,
    headers: dict[str, str] | None = None,
) -> Any:
    """Sign in through the form; returns the response (a 303 on success)."""
    page = await client.get("/login")
    token = csrf_of(await page.text())
    return await client.post(
        "/login",
        data={"name": name, "password": password, "csrf_token": token, "next": "/"},
        headers=headers,
        allow_redirects=False,
    )


async def page_csrf(client: TestClient[web.Request, web.Application], path: str = "/") -> str:
    response = await client.get(path)
    assert response.status == 200, await response.text()
    return csrf_of(await response.text())


@contextmanager
def console_server(
    database_url: str, cwd: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """`oracle console serve` over `database_url` as a process of its own, on plain http
    at 127.0.0.1 (the one address where Secure cookies may be off); yields its base URL.
    `env`: more ORACLE__ settings."""
    port = free_port()
    extra = env or {}
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ORACLE")},
        "ORACLE__DATABASE__URL": database_url,
        "ORACLE__CONSOLE__PORT": str(port),
        "ORACLE__CONSOLE__SECURE_COOKIES": "false",
        "ORACLE__CONSOLE__QUEUE_POLL_SECONDS": "0.2",
        # This checkout's package, whichever one the environment installed.
        "PYTHONPATH": os.pathsep.join(
            [str(CHECKOUT), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
        **extra,
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "oracle", "console", "serve"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    output = server.stdout.read() if server.stdout else ""
                    pytest.fail(f"the console did not start: {output}")
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def browser_sign_in(page: Any, base: str, name: str, password: str = PASSWORD) -> None:
    """Sign in through the console's form in a Playwright page."""
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def rewrite_audit(store: Store, entry_id: int, **changes: Any) -> None:
    """What someone with write access to the database can do: change an entry and
    recompute its hash and every hash after it, so the chain holds again."""
    table = ConsoleAuditRow.__table__  # type: ignore[attr-defined]
    entries = store.audit_entries()
    previous = GENESIS if entry_id == 1 else entries[entry_id - 2]["hash"]
    with store.engine.begin() as connection:
        for entry in entries[entry_id - 1 :]:
            fields = {**entry, **(changes if entry["id"] == entry_id else {})}
            fields["prev_hash"] = previous
            fields["hash"] = previous = entry_hash(fields)
            connection.execute(
                update(table)
                .where(table.c.id == entry["id"])
                .values({k: v for k, v in fields.items() if k != "id"})
            )


def cut_audit_tail(store: Store, count: int) -> None:
    """Delete the newest `count` entries: the chain that is left still holds."""
    table = ConsoleAuditRow.__table__  # type: ignore[attr-defined]
    last = store.audit_head().entries
    with store.engine.begin() as connection:
        connection.execute(delete(table).where(table.c.id > last - count))
