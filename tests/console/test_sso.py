"""Single sign-on behind an authenticating proxy (oauth2-proxy): the header that names the
account is believed from the proxy's own address only; the account's role applies; a
session starts as after a password sign-in."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from oracle.console.app import SESSION_COOKIE
from oracle.console.settings import ConsoleSettings
from oracle.store.repository import Store

from .helpers import local_settings, make_store, run
from .redirects import HOSTILE_NEXT, LOCAL_NEXT

HEADER = "X-Auth-Request-User"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return make_store(tmp_path)


def behind(proxy: str) -> ConsoleSettings:
    return local_settings(trusted_header=HEADER, trusted_proxies=(proxy,))


def test_the_proxys_header_signs_the_account_in_with_its_role(store: Store) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.get(
            "/login?next=/approvals", headers={HEADER: "ann"}, allow_redirects=False
        )
        assert response.status == 303
        assert response.headers["Location"] == "/approvals"
        assert SESSION_COOKIE in response.cookies
        page = await client.get("/approvals")
        assert page.status == 200
        assert "ann" in await page.text()
        # The session is a session: later requests need no header.
        assert (await client.get("/")).status == 200

    run(store, scenario, behind("127.0.0.1/32"))  # exactly the test server's address
    (entry,) = [e for e in store.audit_entries() if e["action"] == "console.signed_in"]
    assert (entry["actor"], entry["details"]) == ("ann", {"via": "proxy"})


def test_single_sign_on_redirects_only_to_a_path_on_the_console(store: Store) -> None:
    expected = {**dict.fromkeys(HOSTILE_NEXT, "/"), **LOCAL_NEXT}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for target, location in expected.items():
            response = await client.get(
                "/login", params={"next": target}, headers={HEADER: "ann"}, allow_redirects=False
            )
            assert response.status == 303, repr(target)
            assert response.headers["Location"] == location, repr(target)

    run(store, scenario, behind("127.0.0.1/32"))


def test_an_account_the_console_does_not_know_is_refused(store: Store) -> None:
    store.disable_user("val", actor="adam")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for name in ("mallory", "val"):
            response = await client.get("/login", headers={HEADER: name}, allow_redirects=False)
            assert response.status == 403
            assert SESSION_COOKIE not in response.cookies
            assert "no active console account" in await response.text()

    run(store, scenario, behind("127.0.0.1/32"))


def test_the_header_from_anywhere_but_the_proxy_is_ignored(store: Store) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        # The test client is 127.0.0.1; the proxy is configured as 127.0.0.2.
        response = await client.get("/login", headers={HEADER: "adam"}, allow_redirects=False)
        assert response.status == 200  # the password form, nobody signed in
        assert SESSION_COOKIE not in response.cookies
        guarded = await client.get("/", headers={HEADER: "adam"}, allow_redirects=False)
        assert guarded.status == 303
        assert guarded.headers["Location"].startswith("/login")

    run(store, scenario, behind("127.0.0.2/32"))
    assert [e for e in store.audit_entries() if e["action"] == "console.signed_in"] == []


@pytest.mark.parametrize(
    ("proxies", "message"),
    [
        ((), "trusted_proxies: name the authenticating proxy's addresses"),
        (("10.0.0.0/8",), "wider than a /24"),
        (("0.0.0.0/0",), "wider than a /24"),
        (("::/0",), "wider than a /24 (IPv4) or /64 (IPv6)"),
        (("proxy.internal",), "is not an IP address or network"),
    ],
)
def test_a_proxy_allowlist_that_would_trust_anyone_is_refused(
    proxies: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ConsoleSettings(trusted_header=HEADER, trusted_proxies=proxies)
