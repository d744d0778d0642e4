"""The console's security, through its real HTTP path over a real SQLite store: stored
XSS, CSRF, session fixation, roles on every endpoint, four-eyes, sign-in throttling,
stale decisions and the audit chain."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from pathlib import Path

import pytest
from sqlalchemy import text

from oracle.console.app import CSP, LOGIN_CSRF_COOKIE, ROUTES, SESSION_COOKIE
from oracle.console.settings import ConsoleSettings
from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import MarketSpec
from oracle.core.models import AgentFailure
from oracle.store.repository import Store
from oracle.testing import result

from .helpers import (
    PASSWORD,
    FakeClock,
    csrf_of,
    cut_audit_tail,
    local_settings,
    make_store,
    page_csrf,
    run,
    sign_in,
)
from .redirects import HOSTILE_NEXT, LOCAL_NEXT
from .scenario import (
    agreeing,
    beside_another_answer,
    contested,
    escalate,
    research_again,
    superseded_for_review,
)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return make_store(tmp_path)


def _path(template: str) -> str:
    return template.replace("{review_id}", "1").replace("{consensus_id}", "1")


def test_every_guarded_route_refuses_a_stranger(store: Store) -> None:
    escalate(store, "q1")
    guarded = [(m, p) for m, p, _, action in ROUTES if action is not None]
    assert len(guarded) >= 15

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for method, template in guarded:
            response = await client.request(method, _path(template), allow_redirects=False)
            if template.startswith("/api/"):
                assert response.status == 401, (method, template)
                assert "sign in first" in (await response.json())["error"]
            else:
                assert response.status == 303, (method, template)
                assert response.headers["Location"].startswith("/login")
        bad_token = {"Authorization": "Bearer oct_not-a-token"}
        response = await client.get("/api/reviews", headers=bad_token)
        assert response.status == 401

    run(store, scenario)
    assert store.review(1).status == "open"


def test_agent_reasoning_and_source_titles_cannot_run_script(store: Store) -> None:
    evil = result(
        "claude-researcher",
        "YES",
        0.8,
        reasoning='<script>alert("reasoning")</script> and "quotes" & <b>tags</b>',
    )
    answers = [evil, *contested()[1:]]
    review_id = escalate(
        store, "q1", answers, [AgentFailure(agent_id="x", error="<svg onload=alert(2)>")]
    )
    # A source row written by an older version, or around the agents' URL checks.
    with store.engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE agent_source SET url = 'javascript:alert(document.cookie)', "
                "title = '<img src=x onerror=alert(3)>', "
                "quote = '</blockquote><script>alert(4)</script>' "
                "WHERE id = (SELECT MIN(id) FROM agent_source)"
            )
        )

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        assert (await sign_in(client, "rita")).status == 303
        response = await client.get(f"/reviews/{review_id}")
        html = await response.text()
        assert response.status == 200
        assert response.headers["Content-Security-Policy"] == CSP
        assert "default-src 'self'" in CSP
        # The one script element is the console's own file; none came from the agents.
        assert html.count("<script") == 1
        assert '<script src="/static/console.js" defer></script>' in html
        assert "&lt;script&gt;alert(&#34;reasoning&#34;)&lt;/script&gt;" in html
        assert "<img src=x" not in html
        assert "&lt;img src=x onerror=alert(3)&gt;" in html
        assert "<svg" not in html
        assert not re.search(r"href=\"\s*javascript:", html, re.IGNORECASE)
        assert "javascript:alert(document.cookie), not a web link" in html
        # The quoted words are shown, as words.
        assert "&lt;/blockquote&gt;&lt;script&gt;alert(4)&lt;/script&gt;" in html
        assert "onerror=alert" not in html.replace("&lt;img src=x onerror=alert(3)&gt;", "")
        evidence = await (await client.get(f"/api/reviews/{review_id}")).json()
        assert evidence["outcomes"][0]["agents"][0]["reasoning"].startswith("<script>")

    run(store, scenario)


def test_a_form_without_the_right_csrf_token_is_refused(store: Store) -> None:
    review_id = escalate(store, "q1")
    consensus = store.latest_consensus("chain:q1")
    assert consensus is not None
    form = {
        "outcome": "YES",
        "reason": "seen it",
        "confirm": "yes",
        "consensus_id": str(consensus.id),
        "checksum": consensus.checksum,
    }

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        for token in (None, "wrong", ""):
            data = form if token is None else {**form, "csrf_token": token}
            response = await client.post(
                f"/reviews/{review_id}/decide", data=data, allow_redirects=False
            )
            assert response.status == 403
            assert "CSRF token is missing or wrong" in await response.text()
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=form, headers={"X-CSRF-Token": "nope"}
        )
        assert response.status == 403
        assert store.review(review_id).status == "open"
        token = await page_csrf(client, f"/reviews/{review_id}")
        response = await client.post(
            f"/reviews/{review_id}/decide",
            data={**form, "csrf_token": token},
            allow_redirects=False,
        )
        assert response.status == 303

    run(store, scenario)
    assert store.review(review_id).status == "decided"


def test_signing_in_never_keeps_a_planted_session(store: Store) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        # The attacker's own valid session, planted in the victim's browser.
        await sign_in(client, "val")
        planted = client.session.cookie_jar.filter_cookies(client.make_url("/"))[
            SESSION_COOKIE
        ].value
        assert (await sign_in(client, "rita")).status == 303
        fresh = client.session.cookie_jar.filter_cookies(client.make_url("/"))[SESSION_COOKIE].value
        assert fresh != planted
        assert store.session_person(planted) is None  # the planted session is over
        signed_in = store.session_person(fresh)
        assert signed_in is not None
        assert signed_in.person.name == "rita"
        csrf = await page_csrf(client)
        response = await client.post("/logout", data={"csrf_token": csrf}, allow_redirects=False)
        assert response.status == 303
        assert store.session_person(fresh) is None  # signing out ends the session
        # A made-up session id is simply not signed in.
        client.session.cookie_jar.clear()
        client.session.cookie_jar.update_cookies({SESSION_COOKIE: "made-up"})
        response = await client.get("/", allow_redirects=False)
        assert response.status == 303

    run(store, scenario)


def test_signing_in_redirects_only_to_a_path_on_the_console(store: Store) -> None:
    expected = {**dict.fromkeys(HOSTILE_NEXT, "/"), **LOCAL_NEXT}
    # "?next=%2F%2Fevil.example" (encoded in the query) arrives as "//evil.example".
    assert "//evil.example/" in expected

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for target, location in expected.items():
            page = await client.get("/login", params={"next": target})
            html = await page.text()
            assert f'name="next" value="{location}"' in html, repr(target)
            response = await client.post(
                "/login",
                data={
                    "name": "rita",
                    "password": PASSWORD,
                    "csrf_token": csrf_of(html),
                    "next": target,
                },
                allow_redirects=False,
            )
            assert response.status == 303, repr(target)
            assert response.headers["Location"] == location, repr(target)

    run(store, scenario)


def test_a_page_asked_for_before_signing_in_is_where_signing_in_leads(store: Store) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.get("/?status=all&venue=a%26b", allow_redirects=False)
        assert response.headers["Location"] == "/login?next=/?status%3Dall%26venue%3Da%2526b"
        html = await (await client.get(response.headers["Location"])).text()
        assert 'name="next" value="/?status=all&amp;venue=a%26b"' in html

    run(store, scenario)


def test_the_session_cookie_is_secure_httponly_and_strict(store: Store) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        # The test client keeps Secure cookies off plain http: send the form's back by hand.
        page = await client.get("/login")
        nonce = csrf_of(await page.text())
        response = await client.post(
            "/login",
            data={"name": "rita", "password": PASSWORD, "csrf_token": nonce},
            headers={"Cookie": f"{LOGIN_CSRF_COOKIE}={nonce}"},
            allow_redirects=False,
        )
        assert response.status == 303
        [cookie] = [c for c in response.headers.getall("Set-Cookie") if SESSION_COOKIE in c]
        for flag in ("HttpOnly", "Secure", "SameSite=Strict"):
            assert flag in cookie

    run(store, scenario, ConsoleSettings())
    with pytest.raises(ValueError, match="secure_cookies: may be false only when host"):
        ConsoleSettings(host="0.0.0.0", secure_cookies=False)


def test_a_viewer_cannot_decide_through_the_page_or_the_api(store: Store) -> None:
    review_id = escalate(store, "q1")
    token = store.create_token("val")
    consensus = store.latest_consensus("chain:q1")
    assert consensus is not None
    form = {
        "outcome": "YES",
        "reason": "r",
        "confirm": "yes",
        "consensus_id": str(consensus.id),
        "checksum": consensus.checksum,
    }

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "val")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert 'action="/reviews/1/decide"' not in html  # no form offered
        csrf = await page_csrf(client)
        response = await client.post(
            f"/reviews/{review_id}/decide", data={**form, "csrf_token": csrf}
        )
        assert response.status == 403
        assert "val (viewer) may not decide" in await response.text()
        for path in ("decide", "approve", "reopen", "send-back"):
            response = await client.post(
                f"/api/reviews/{review_id}/{path}",
                json={**form, "confirm": True},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status == 403, path
        response = await client.get("/api/reviews", headers={"Authorization": f"Bearer {token}"})
        assert response.status == 200

    run(store, scenario)
    assert store.review(review_id).status == "open"


def test_four_eyes_through_the_console(store: Store) -> None:
    review_id = escalate(store, "q1", agreeing(), force_review=True)

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        page = await client.get(f"/reviews/{review_id}")
        html = await page.text()
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]
        consensus_id = re.search(r'name="consensus_id" value="(\d+)"', html).group(1)  # type: ignore[union-attr]
        checksum = re.search(r'name="checksum" value="([0-9a-f]{64})"', html).group(1)  # type: ignore[union-attr]
        form = {
            "csrf_token": csrf,
            "consensus_id": consensus_id,
            "checksum": checksum,
            "reason": "the official record says no",
        }
        response = await client.post(f"/reviews/{review_id}/decide", data={**form, "outcome": "NO"})
        assert response.status == 400
        assert "confirm the decision" in await response.text()
        response = await client.post(
            f"/reviews/{review_id}/decide", data={**form, "outcome": "NO", "confirm": "yes"}
        )
        assert response.status == 200
        assert "awaiting approval" in await response.text()
        assert store.get_market("chain:q1").state == MarketState.NEEDS_REVIEW
        # The reviewer may not approve (role), nor may the approver approve their own.
        response = await client.post(f"/reviews/{review_id}/approve", data={"csrf_token": csrf})
        assert response.status == 403
        await client.post("/logout", data={"csrf_token": csrf})
        await sign_in(client, "ann")
        html = await (await client.get("/approvals")).text()
        assert "overrides the consensus YES, which reached quorum" in html
        csrf = await page_csrf(client, "/approvals")
        response = await client.post(f"/reviews/{review_id}/approve", data={"csrf_token": csrf})
        assert response.status == 200
        metrics = await (await client.get("/metrics")).text()
        assert 'oracle_console_decisions_total{reviewer="rita"} 1.0' in metrics
        assert 'oracle_console_approvals_total{approver="ann"} 1.0' in metrics

    run(store, scenario)
    market = store.get_market("chain:q1")
    assert (market.state, market.decided_outcome) == (MarketState.REVIEWED, "NO")
    item = store.review(review_id)
    assert (item.decided_by, item.approved_by) == ("rita", "ann")


def test_an_approver_cannot_approve_their_own_decision(store: Store) -> None:
    review_id = escalate(store, "q1")
    token = store.create_token("ann")
    consensus = store.latest_consensus("chain:q1")
    assert consensus is not None
    auth = {"Authorization": f"Bearer {token}"}
    decision = {
        "outcome": "INVALID",
        "reason": "ambiguous",
        "confirm": True,
        "consensus_id": consensus.id,
        "checksum": consensus.checksum,
    }

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=decision, headers=auth
        )
        assert (await response.json())["status"] == "needs_approval"
        response = await client.post(f"/api/reviews/{review_id}/approve", headers=auth)
        assert response.status == 403
        assert "another person must approve" in (await response.json())["error"]

    run(store, scenario)
    assert store.review(review_id).status == "needs_approval"


def test_failures_on_an_account_delay_it_and_never_lock_its_owner_out(tmp_path: Path) -> None:
    clock = FakeClock()
    store = make_store(tmp_path, clock)
    settings = local_settings(login_max_failures=2, login_max_delay_seconds=60)

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for _ in range(2):  # a stranger, failing on rita's account
            response = await sign_in(client, "rita", "not the password")
            assert response.status == 401
            assert "Wrong name or password" in await response.text()
        response = await sign_in(client, "rita", PASSWORD)  # right, but too soon
        assert response.status == 429
        assert response.headers["Retry-After"] == "2"
        assert "Too many failed sign-ins: try again in 2 seconds" in await response.text()
        assert (await sign_in(client, "ann", PASSWORD)).status == 303  # others unaffected
        clock.now += 2
        assert (await sign_in(client, "rita", "still not it")).status == 401
        assert (await sign_in(client, "rita", PASSWORD)).headers["Retry-After"] == "4"
        clock.now += 4  # once the wait is over, the owner signs in
        assert (await sign_in(client, "rita", PASSWORD)).status == 303
        metrics = await (await client.get("/metrics")).text()
        assert 'oracle_console_login_failures_total{kind="wrong"} 3.0' in metrics
        assert 'oracle_console_login_failures_total{kind="delayed"} 2.0' in metrics

    run(store, scenario, settings)
    delayed = [e for e in store.audit_entries() if e["action"] == "console.sign_in_delayed"]
    assert [(e["subject"], e["details"]["failures"]) for e in delayed] == [("user:rita", 2)]


def test_an_address_failing_on_many_accounts_is_refused_behind_a_trusted_proxy(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    store = make_store(tmp_path, clock)
    settings = local_settings(
        login_address_max_failures=3,
        login_window_seconds=600,
        trusted_proxies=("127.0.0.1/32",),  # the test client, standing for the proxy
        client_address_header="X-Forwarded-For",
    )
    # The proxy appends the address it saw; whatever the client wrote comes before it.
    attacker = {"X-Forwarded-For": "198.51.100.7, 203.0.113.9"}
    colleague = {"X-Forwarded-For": "198.51.100.7, 203.0.113.10"}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for name in ("rita", "val", "nobody"):
            assert (await sign_in(client, name, "guess", attacker)).status == 401
        response = await sign_in(client, "ann", PASSWORD, attacker)
        assert response.status == 429
        assert response.headers["Retry-After"] == "600"
        assert (await sign_in(client, "ann", PASSWORD, colleague)).status == 303
        clock.now += 601
        assert (await sign_in(client, "ann", PASSWORD, attacker)).status == 303

    run(store, scenario, settings)
    (blocked,) = [
        e for e in store.audit_entries() if e["action"] == "console.sign_in_address_blocked"
    ]
    assert blocked["subject"] == "address:203.0.113.9"
    with pytest.raises(ValueError, match="name the reverse proxy's addresses"):
        ConsoleSettings(client_address_header="X-Forwarded-For")


def test_a_decision_on_replaced_evidence_is_refused_as_stale(store: Store) -> None:
    review_id = escalate(store, "q1")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        form = {
            name: re.search(rf'name="{name}" value="([^"]*)"', html).group(1)  # type: ignore[union-attr]
            for name in ("csrf_token", "consensus_id", "checksum")
        }
        # Meanwhile another reviewer sends it back and new research arrives.
        store.send_back_for_research(review_id, "ann", "check again")
        newer = research_again(store, "chain:q1", contested())
        response = await client.post(
            f"/reviews/{newer}/decide",
            data={**form, "outcome": "YES", "reason": "seen it", "confirm": "yes"},
        )
        assert response.status == 409
        assert "newer research replaced the evidence shown" in await response.text()
        assert store.review(newer).status == "open"

    run(store, scenario)


def test_console_actions_are_in_a_verifiable_audit_chain(store: Store) -> None:
    review_id = escalate(store, "q1")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        csrf = await page_csrf(client, f"/reviews/{review_id}")
        for action in ("claim", "unassign"):
            response = await client.post(
                f"/reviews/{review_id}/{action}",
                data={"csrf_token": csrf},
                allow_redirects=False,
            )
            assert response.status == 303
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert "review.claimed" in html  # the market's audit history is on the page

    run(store, scenario)
    actions = [e["action"] for e in store.audit_entries("market:chain:q1")]
    assert actions == ["review.viewed", "review.claimed", "review.unassigned", "review.viewed"]
    assert store.verify_audit() == []
    with store.engine.begin() as connection:
        connection.execute(
            text("UPDATE console_audit SET details = '{}' WHERE action = 'review.claimed'")
        )
    assert any("hash does not match" in p for p in store.verify_audit())


def test_sign_in_failures_lockouts_sign_outs_and_refusals_are_audited(store: Store) -> None:
    review_id = escalate(store, "q1")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        for _ in range(2):
            assert (await sign_in(client, "rita", "not the password")).status == 401
        # A password typed into the name field is not kept, not even in the audit log.
        assert (await sign_in(client, PASSWORD, "x")).status == 401
        assert (await sign_in(client, "val")).status == 303
        csrf = await page_csrf(client)
        response = await client.post(
            f"/reviews/{review_id}/claim", data={"csrf_token": csrf}, allow_redirects=False
        )
        assert response.status == 403
        response = await client.post(
            f"/reviews/{review_id}/claim", data={"csrf_token": "forged"}, allow_redirects=False
        )
        assert response.status == 403
        assert (await client.post("/logout", data={"csrf_token": csrf})).status == 200

    run(store, scenario, local_settings(login_max_failures=2))
    entries = store.audit_entries()
    seen = [(e["actor"], e["action"], e["subject"]) for e in entries if e["action"] != "user.added"]
    assert seen == [
        ("anonymous", "console.sign_in_failed", "user:rita"),
        ("anonymous", "console.sign_in_failed", "user:rita"),
        ("console", "console.sign_in_delayed", "user:rita"),
        ("anonymous", "console.sign_in_failed", "user:?"),
        ("val", "console.signed_in", "user:val"),
        ("val", "console.refused", "user:val"),
        ("val", "console.refused", "user:val"),
        ("val", "console.signed_out", "user:val"),
    ]
    refusals = [e["details"] for e in entries if e["action"] == "console.refused"]
    assert [(d["path"], d["reason"]) for d in refusals] == [
        (f"/reviews/{review_id}/claim", "val (viewer) may not decide"),
        (f"/reviews/{review_id}/claim", "the form's CSRF token is missing or wrong"),
    ]
    assert PASSWORD not in str(entries)
    assert "forged" not in str(entries)


def test_the_console_publishes_the_audit_head_in_its_log_and_metrics(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        assert (await sign_in(client, "rita")).status == 303
        head = await asyncio.to_thread(store.audit_head)
        metrics = await (await client.get("/metrics")).text()
        assert f"oracle_console_audit_entries {float(head.entries)}" in metrics
        assert (
            f'oracle_console_audit_head_info{{entries="{head.entries}",'
            f'head_hash="{head.head_hash}"}} 1.0'
        ) in metrics
        # Someone cuts the newest entry: the next scrape shows the count drop.
        await asyncio.to_thread(cut_audit_tail, store, 1)
        metrics = await (await client.get("/metrics")).text()
        assert f"oracle_console_audit_entries {float(head.entries - 1)}" in metrics
        assert head.head_hash not in metrics

    with caplog.at_level(logging.INFO, logger="oracle.console.audit"):
        run(store, scenario)
    logged = [
        (r.event, r.fields)  # type: ignore[attr-defined]
        for r in caplog.records
        if getattr(r, "event", "").startswith("console.audit_")
    ]
    first = store.audit_entries()[3]  # after the four accounts: the console's start
    assert logged[0] == ("console.audit_head", {"entries": 4, "head_hash": first["hash"]})
    signed_in = logged[1][1]
    assert logged[1][0] == "console.audit_appended"
    assert (signed_in["entries"], signed_in["action"]) == (5, "console.signed_in")
    assert PASSWORD not in caplog.text


def test_health_and_metrics(store: Store) -> None:
    escalate(store, "q1")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        assert (await (await client.get("/healthz")).json()) == {"status": "ok"}
        metrics = await (await client.get("/metrics")).text()
        assert "oracle_console_oldest_open_review_age_seconds" in metrics
        assert 'oracle_console_open_reviews{status="open"} 1.0' in metrics

    run(store, scenario)


def test_the_queue_streams_its_changes_to_signed_in_people_only(store: Store) -> None:
    review_id = escalate(store, "q1")

    async def next_event(response) -> str:  # type: ignore[no-untyped-def]
        raw = await asyncio.wait_for(response.content.readuntil(b"\n\n"), timeout=10)
        return str(raw.decode())

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.get("/events/queue", allow_redirects=False)
        assert response.status == 303  # strangers get no stream
        await sign_in(client, "val")
        response = await client.get("/events/queue")
        assert response.headers["Content-Type"] == "text/event-stream"
        first = await next_event(response)
        assert first == 'event: queue\ndata: {"open": 1, "needs_approval": 0}\n\n'
        # Each change names the items that changed, not the whole queue.
        await asyncio.to_thread(store.claim_review, review_id, "rita", assignee="rita")
        claimed = await next_event(response)
        assert claimed.startswith("event: changes\n"), claimed
        assert json.loads(claimed.split("data: ", 1)[1]) == {
            "counts": {"open": 1, "needs_approval": 0},
            "changed": [review_id],
            "added": [],
            "removed": [],
        }
        other = escalate(store, "q2")
        added = json.loads((await next_event(response)).split("data: ", 1)[1])
        assert (added["added"], added["changed"]) == ([other], [])
        await asyncio.to_thread(store.decide_review, review_id, "INVALID", "unclear", "rita")
        second = json.loads((await next_event(response)).split("data: ", 1)[1])
        assert second["counts"] == {"open": 1, "needs_approval": 1}
        assert (second["changed"], second["added"], second["removed"]) == ([review_id], [], [])
        await asyncio.to_thread(store.close_reviews, "chain:q2", "settled", "watch")
        closed = json.loads((await next_event(response)).split("data: ", 1)[1])
        assert (closed["removed"], closed["changed"]) == ([other], [])
        response.close()

    run(store, scenario, local_settings(queue_poll_seconds=0.1))


async def _stream_ended(response) -> bool:  # type: ignore[no-untyped-def]
    """Whether the event stream ends (the server finished it) before it says anything
    more: a `signed_out` event, then nothing."""
    raw = await asyncio.wait_for(response.content.readuntil(b"\n\n"), timeout=10)
    assert raw == b"event: signed_out\ndata: {}\n\n", raw
    rest = await asyncio.wait_for(response.content.read(), timeout=10)
    return bool(rest == b"")


def test_a_disabled_accounts_event_stream_stops_at_once(store: Store) -> None:
    review_id = escalate(store, "q1")
    token = store.create_token("ann")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "val")
        by_session = await client.get("/events/queue")
        by_token = await client.get("/events/queue", headers={"Authorization": f"Bearer {token}"})
        for stream in (by_session, by_token):
            first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), timeout=10)
            assert first.startswith(b"event: queue\n")
        await asyncio.to_thread(store.disable_user, "val", "adam")
        await asyncio.to_thread(store.disable_user, "ann", "adam")
        # The queue changes: a live stream would tell; these only say they are over.
        await asyncio.to_thread(store.claim_review, review_id, "rita", assignee="rita")
        assert await _stream_ended(by_session)
        assert await _stream_ended(by_token)

    run(store, scenario, local_settings(queue_poll_seconds=0.1))


def test_signing_out_ends_the_sessions_event_streams(store: Store) -> None:
    review_id = escalate(store, "q1")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        stream = await client.get("/events/queue")
        first = await asyncio.wait_for(stream.content.readuntil(b"\n\n"), timeout=10)
        assert first.startswith(b"event: queue\n")
        csrf = await page_csrf(client)
        response = await client.post("/logout", data={"csrf_token": csrf}, allow_redirects=False)
        assert response.status == 303
        await asyncio.to_thread(store.claim_review, review_id, "ann", assignee="ann")
        assert await _stream_ended(stream)

    run(store, scenario, local_settings(queue_poll_seconds=0.1))


def test_an_item_without_a_consensus_is_shown_and_decided(store: Store) -> None:
    spec = MarketSpec(source="chain", external_id="q9", question="Q9 <b>?</b>", resolve_after=1.0)
    store.add_discovered([spec], actor="poller")
    store.apply_event(spec.market_id, MarketEvent.DUE, actor="s")
    store.apply_event(spec.market_id, MarketEvent.RESEARCH_STARTED, actor="s")
    store.apply_event(spec.market_id, MarketEvent.FAILED, actor="s")
    _, review_id = store.hand_to_person(
        spec.market_id, MarketEvent.RETRIES_EXHAUSTED, actor="s", reasons=["every attempt failed"]
    )

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert "No consensus was recorded" in html
        assert "Q9 &lt;b&gt;?&lt;/b&gt;" in html
        csrf = await page_csrf(client, f"/reviews/{review_id}")
        response = await client.post(
            f"/api/reviews/{review_id}/decide",
            json={"outcome": "YES", "reason": "checked by hand", "confirm": True},
            headers={"X-CSRF-Token": csrf},
        )
        assert (await response.json())["status"] == "decided"

    run(store, scenario)
    assert store.get_market(spec.market_id).state == MarketState.REVIEWED


def test_an_approver_hands_an_item_to_a_reviewer_and_a_reviewer_cannot(store: Store) -> None:
    review_id = escalate(store, "q1")
    store.claim_review(review_id, "rita", assignee="rita")

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "rita")
        csrf = await page_csrf(client, f"/reviews/{review_id}")
        response = await client.post(
            f"/reviews/{review_id}/assign", data={"csrf_token": csrf, "assignee": "adam"}
        )
        assert response.status == 403
        await client.post("/logout", data={"csrf_token": csrf})
        await sign_in(client, "ann")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert '<option value="rita" selected>rita</option>' in html
        assert '<option value="val"' not in html  # a viewer cannot be handed work
        csrf = await page_csrf(client, f"/reviews/{review_id}")
        response = await client.post(
            f"/reviews/{review_id}/assign", data={"csrf_token": csrf, "assignee": "val"}
        )
        assert response.status == 400
        assert "val (viewer) cannot decide reviews" in await response.text()
        response = await client.post(
            f"/reviews/{review_id}/assign",
            data={"csrf_token": csrf, "assignee": "adam"},
            allow_redirects=False,
        )
        assert response.status == 303

    run(store, scenario)
    assert store.review(review_id).claimed_by == "adam"
    assert [e["details"]["assignee"] for e in store.audit_entries("market:chain:q1")
            if e["action"] == "review.claimed"] == ["rita", "adam"]  # fmt: skip


def test_the_console_api_confirms_a_dispute_through_the_same_decision(store: Store) -> None:
    review_id = beside_another_answer(store, "r1", challenge="dispute")
    auth = {"Authorization": f"Bearer {store.create_token('rita')}"}
    decision = {"outcome": "YES", "reason": "they are wrong", "confirm": True}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        evidence = await (await client.get(f"/api/reviews/{review_id}", headers=auth)).json()
        assert evidence["review"]["challenge"]["their_outcome"] == "NO"
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=decision, headers=auth
        )
        # A dispute moves money: it waits for a second person (four-eyes by default).
        assert await response.json() == {
            "review": review_id,
            "status": "needs_approval",
            "market_state": "submitted",
        }
        approver = {"Authorization": f"Bearer {store.create_token('ann')}"}
        response = await client.post(f"/api/reviews/{review_id}/approve", headers=approver)
        assert (await response.json())["market_state"] == "challenging"

    run(store, scenario)
    assert store.get_market("uma:r1").submission["challenge_pending"]["by"] == "ann"
    assert store.review(review_id).approval_reason == (
        "moves money: confirms a dispute against their answer"
    )


def test_a_venue_whose_money_decisions_take_one_person_disputes_at_once(store: Store) -> None:
    review_id = beside_another_answer(store, "r1", challenge="dispute")
    auth = {"Authorization": f"Bearer {store.create_token('rita')}"}
    decision = {"outcome": "YES", "reason": "they are wrong", "confirm": True}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=decision, headers=auth
        )
        assert (await response.json())["market_state"] == "challenging"

    run(store, scenario, local_settings(money_decisions_by_source={"uma": "one_person"}))
    assert store.get_market("uma:r1").submission["challenge_pending"]["by"] == "rita"


def test_deciding_an_item_another_claimed_needs_a_confirmation(store: Store) -> None:
    review_id = escalate(store, "q1")
    store.claim_review(review_id, "ann", assignee="ann")
    auth = {"Authorization": f"Bearer {store.create_token('rita')}"}
    shown = store.latest_consensus("chain:q1")
    assert shown is not None
    decision = {
        "outcome": "YES",
        "reason": "the record says so",
        "confirm": True,
        "consensus_id": shown.id,
        "checksum": shown.checksum,
    }

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=decision, headers=auth
        )
        assert response.status == 409
        assert "claimed by ann" in (await response.json())["error"]
        assert store.review(review_id).status == "open"
        response = await client.post(
            f"/api/reviews/{review_id}/decide",
            json={**decision, "override_claim": True},
            headers=auth,
        )
        assert response.status == 200, await response.text()

    run(store, scenario)
    assert store.review(review_id).decided_by == "rita"
    overridden = [
        e
        for e in store.audit_entries("market:chain:q1")
        if e["action"] == "review.claim_overridden"
    ]
    assert [(e["actor"], e["details"]["claimed_by"]) for e in overridden] == [("rita", "ann")]


def test_the_console_shows_what_confirming_a_defence_does_and_confirms_it(store: Store) -> None:
    review_id = superseded_for_review(store, "q1")
    auth = {"Authorization": f"Bearer {store.create_token('rita')}"}
    decision = {"outcome": "YES", "reason": "they are wrong", "confirm": True}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        evidence = await (await client.get(f"/api/reviews/{review_id}", headers=auth)).json()
        offer = evidence["review"]["challenge"]
        assert (offer["action"], offer["their_outcome"]) == ("defend", "NO")
        assert offer["confirms"].startswith("a defence of our superseded answer")
        await sign_in(client, "rita")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert "deciding another outcome confirms a defence of our superseded answer" in html
        response = await client.post(
            f"/api/reviews/{review_id}/decide", json=decision, headers=auth
        )
        assert (await response.json())["status"] == "needs_approval"  # money moves
        approver = {"Authorization": f"Bearer {store.create_token('ann')}"}
        response = await client.post(f"/api/reviews/{review_id}/approve", headers=approver)
        assert (await response.json())["market_state"] == "challenging"

    run(store, scenario)
    assert store.get_market("reality:q1").submission["challenge_pending"]["action"] == "defend"


def test_market_text_is_isolated_and_what_was_hidden_is_counted(store: Store) -> None:
    review_id = escalate(
        store,
        "q1",
        question="Will it rain? \u202eSEY\u202c " + "x" * 300,
        details={"hidden_characters": 14},
    )

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        assert (await sign_in(client, "rita")).status == 303
        html = await (await client.get(f"/reviews/{review_id}")).text()
        # Isolated: its direction cannot reorder the page around it.
        assert '<h1 class="question"><bdi>Will it rain? \u202eSEY\u202c x' in html
        assert '<p class="text"><bdi>Per the official record.</bdi></p>' in html
        assert "<bdi>YES</bdi></label>" in html
        assert "this question contained 14 invisible characters" in html
        queue = await (await client.get("/")).text()
        assert '"><bdi>Will it rain?' in queue
        css = await (await client.get("/static/console.css")).text()
        assert "bdi { unicode-bidi: isolate; }" in css
        assert (
            "h1.question { font-size: 1.5rem; margin: .2rem 0 .6rem; overflow-wrap: anywhere; }"
            in css
        )

    run(store, scenario)


def test_comments_need_a_reviewer_and_the_forms_token_and_are_shown_escaped(
    store: Store,
) -> None:
    review_id = escalate(store, "q1")
    hostile = '<script>alert("x")</script>\u202etxet'

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        await sign_in(client, "val")
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert 'action="/reviews/1/comment"' not in html  # a viewer gets no form
        csrf = await page_csrf(client)
        response = await client.post(
            f"/reviews/{review_id}/comment", data={"text": "hi", "csrf_token": csrf}
        )
        assert response.status == 403
        await client.post("/logout", data={"csrf_token": csrf})
        await sign_in(client, "rita")
        response = await client.post(f"/reviews/{review_id}/comment", data={"text": "hi"})
        assert response.status == 403  # no CSRF token
        csrf = await page_csrf(client, f"/reviews/{review_id}")
        response = await client.post(
            f"/reviews/{review_id}/comment",
            data={"text": hostile, "csrf_token": csrf},
            allow_redirects=False,
        )
        assert response.status == 303
        html = await (await client.get(f"/reviews/{review_id}")).text()
        assert '<p class="text"><bdi>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;' in html
        assert "<script>alert" not in html
        response = await client.post(
            f"/reviews/{review_id}/comment", data={"text": "x" * 4001, "csrf_token": csrf}
        )
        assert response.status == 400

    run(store, scenario)
    comments = [
        e for e in store.audit_entries("market:chain:q1") if e["action"] == "review.commented"
    ]
    assert [(e["actor"], e["details"]) for e in comments] == [
        ("rita", {"review": review_id, "text": hostile})
    ]
    assert store.verify_audit() == []


def test_the_queue_api_pages_searches_and_refuses_a_bad_page(store: Store) -> None:
    ids = [escalate(store, f"q{i}", resolve_after=1000.0 - i) for i in range(7)]
    token = store.create_token("val")
    auth = {"Authorization": f"Bearer {token}"}

    async def scenario(client) -> None:  # type: ignore[no-untyped-def]
        body = await (await client.get("/api/reviews?page=2", headers=auth)).json()
        # Soonest deadline first: the last escalated resolves first.
        assert [r["id"] for r in body["reviews"]] == ids[::-1][5:]
        assert (body["total"], body["page"], body["pages"], body["per_page"]) == (7, 2, 2, 5)
        body = await (await client.get("/api/reviews?q=chain:q3", headers=auth)).json()
        assert [r["id"] for r in body["reviews"]] == [ids[3]]
        response = await client.get("/api/reviews?page=two", headers=auth)
        assert response.status == 400
        assert "page 'two' is not a number" in (await response.json())["error"]

    run(store, scenario, local_settings(page_size=5))
