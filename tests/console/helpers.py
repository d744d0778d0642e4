"""The console over a real SQLite store, driven through aiohttp's test client."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from oracle.console.app import make_app
from oracle.console.settings import ConsoleSettings
from oracle.store.database import open_database
from oracle.store.repository import Store

PASSWORD = "correct horse battery"
ACCOUNTS = {"rita": "reviewer", "ann": "approver", "val": "viewer", "adam": "admin"}
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def make_store(tmp_path: Path) -> Store:
    store = Store(open_database(f"sqlite:///{tmp_path / 'oracle.db'}", create=True))
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
    client: TestClient[web.Request, web.Application], name: str, password: str = PASSWORD
) -> Any:
    """Sign in through the form; returns the response (a 303 on success)."""
    page = await client.get("/login")
    token = csrf_of(await page.text())
    return await client.post(
        "/login",
        data={"name": name, "password": password, "csrf_token": token, "next": "/"},
        allow_redirects=False,
    )


async def page_csrf(client: TestClient[web.Request, web.Application], path: str = "/") -> str:
    response = await client.get(path)
    assert response.status == 200, await response.text()
    return csrf_of(await response.text())
