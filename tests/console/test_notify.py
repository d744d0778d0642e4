"""Per-person notifications (`oracle.console.notify`), against a real local aiohttp
server: a webhook receives the small JSON body and Alertmanager's API one alert per
person; a receiver that fails (503, no connection) is tried again with doubling waits
until it accepts, and then never again; one that always fails is given up after
`notify_max_attempts`; a 4xx refusal is given up at once; a notice pending when the
console stops is sent after it starts again. Each outcome is counted and logged, and
the webhook's token is in no log line, metric or row."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from oracle import scrub
from oracle.console import notify
from oracle.console.app import CONSOLE, make_app
from oracle.console.metrics import ConsoleMetrics
from oracle.console.settings import ConsoleSettings
from oracle.devchain import free_port
from oracle.store.database import open_database
from oracle.store.repository import Store

from .helpers import local_settings, make_store, page_csrf, sign_in
from .scenario import escalate

TOKEN = "hook-token-5f0c2d9e7a1b"  # the webhook's credential: never written anywhere
NOTICE = notify.body("approval_needed", ["ann", "otto"], "rita", 7, "uma:0x1", "Q" * 500)


@dataclass
class Receiver:
    """A local aiohttp server answering each POST with the next of `statuses` (the last
    one from then on), recording what it received."""

    statuses: list[int]
    received: list[tuple[str, Any]] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append((request.path, await request.json()))
        status = self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]
        return web.Response(status=status)


@asynccontextmanager
async def receiving(receiver: Receiver, port: int = 0) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/{tail:.*}", receiver.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        bound = runner.addresses[0][1]
        yield f"http://127.0.0.1:{bound}"
    finally:
        await runner.cleanup()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(open_database(f"sqlite:///{tmp_path / 'oracle.db'}", create=True))
    yield store
    store.engine.dispose()


@pytest.fixture(autouse=True)
def token_is_a_secret() -> None:
    # As `oracle console serve` registers it from the settings (scrub.add_settings).
    scrub.add_settings(settings(f"http://127.0.0.1:1/hook?token={TOKEN}"))


def settings(url: str, **overrides: Any) -> ConsoleSettings:
    return local_settings(
        notify_webhook_url=url,
        notify_retry_backoff_seconds=0.05,
        notify_retry_backoff_max_seconds=0.2,
        notify_timeout_seconds=2.0,
        **overrides,
    )


def counted(metrics: ConsoleMetrics) -> dict[str, float]:
    return {
        outcome: metrics.notifications.labels(outcome)._value.get()
        for outcome in ("sent", "failed", "given_up", "refused")
    }


async def until_settled(store: Store, notifier: notify.Notifier, passes: int = 50) -> None:
    """Send due notices, waiting out the back-off, until none is pending."""
    for _ in range(passes):
        await notifier.send_due()
        pending, soonest = await asyncio.to_thread(store.pending_notices)
        if pending == 0:
            return
        assert soonest is not None
        await asyncio.sleep(max(soonest - store.clock(), 0.0) + 0.01)
    pytest.fail("notices still pending")


def test_a_webhook_receives_the_notice_as_it_is() -> None:
    async def main() -> None:
        receiver = Receiver([200])
        async with receiving(receiver) as base:
            attempt = await notify.send(f"{base}/hook", NOTICE, 5.0)
        assert attempt == notify.Attempt(notify.Outcome.SENT)
        [(path, body)] = receiver.received
        assert path == "/hook"
        assert body == {
            "kind": "approval_needed",
            "to": ["ann", "otto"],
            "by": "rita",
            "review": 7,
            "market_id": "uma:0x1",
            "question": "Q" * 300,  # cut: a notice, not the evidence
            "path": "/reviews/7",
        }

    asyncio.run(main())


def test_alertmanager_receives_one_alert_per_person() -> None:
    async def main() -> None:
        receiver = Receiver([200])
        async with receiving(receiver) as base:
            await notify.send(f"{base}/api/v2/alerts", NOTICE, 5.0)
        [(_, alerts)] = receiver.received
        assert [a["labels"] for a in alerts] == [
            {
                "alertname": "OracleConsoleNotice",
                "kind": "approval_needed",
                "person": p,
                "review": "7",
            }
            for p in ("ann", "otto")
        ]
        assert alerts[0]["annotations"]["summary"] == "approval needed: review 7 (by rita)"

    asyncio.run(main())


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, notify.Outcome.SENT),
        (202, notify.Outcome.SENT),
        (500, notify.Outcome.FAILED),
        (503, notify.Outcome.FAILED),
        (408, notify.Outcome.FAILED),
        (429, notify.Outcome.FAILED),
        (400, notify.Outcome.REFUSED),
        (401, notify.Outcome.REFUSED),
        (404, notify.Outcome.REFUSED),
    ],
)
def test_which_statuses_are_tried_again(status: int, outcome: notify.Outcome) -> None:
    assert notify.outcome_of_status(status) is outcome


def test_a_failing_receiver_is_tried_again_with_back_off_until_it_accepts_then_never_again(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "oracle.console.notify")
    metrics = ConsoleMetrics()

    async def main() -> None:
        receiver = Receiver([503, 503, 429, 200])
        async with receiving(receiver) as base:
            notifier = notify.Notifier(store, settings(f"{base}/hook?token={TOKEN}"), metrics)
            await notifier.record(NOTICE)
            await until_settled(store, notifier)
            assert len(receiver.received) == 4
            assert all(body == NOTICE for _, body in receiver.received)
            # Sent: however often the sender looks again, it is not sent twice.
            store.clock = lambda: 1e12  # far later
            assert await notifier.send_due() == 0
            assert len(receiver.received) == 4

    asyncio.run(main())
    [row] = store.notices()
    assert (row["status"], row["attempts"], row["last_error"]) == ("sent", 4, "")
    assert counted(metrics) == {"sent": 1, "failed": 3, "given_up": 0, "refused": 0}
    failures = [r for r in caplog.records if r.getMessage().startswith("console.notify_failed")]
    waits = [float(r.getMessage().split("retry_in=")[1].split()[0]) for r in failures]
    assert waits == [0.05, 0.1, 0.2]  # doubling from notify_retry_backoff_seconds
    assert "HTTP 503" in failures[0].getMessage()
    assert "console.notify_sent" in caplog.records[-1].getMessage()
    assert TOKEN not in caplog.text


def test_an_unreachable_receiver_is_given_up_after_the_configured_attempts(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "oracle.console.notify")
    metrics = ConsoleMetrics()
    nobody = f"http://127.0.0.1:{free_port()}/hook?token={TOKEN}"

    async def main() -> None:
        notifier = notify.Notifier(store, settings(nobody, notify_max_attempts=3), metrics)
        await notifier.record(NOTICE)
        await until_settled(store, notifier)

    asyncio.run(main())
    [row] = store.notices()
    assert (row["status"], row["attempts"]) == ("given_up", 3)
    assert row["last_error"] == "ClientConnectorError"
    assert counted(metrics) == {"sent": 0, "failed": 2, "given_up": 1, "refused": 0}
    events = [r.getMessage().split(" ", 1)[0] for r in caplog.records]
    assert events == ["console.notify_failed", "console.notify_failed", "console.notify_given_up"]
    assert caplog.records[-1].levelno == logging.ERROR
    assert TOKEN not in caplog.text
    assert TOKEN not in str(store.notices())


def test_a_refusal_is_not_tried_again(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "oracle.console.notify")
    metrics = ConsoleMetrics()

    async def main() -> None:
        receiver = Receiver([400])
        async with receiving(receiver) as base:
            notifier = notify.Notifier(store, settings(f"{base}/hook"), metrics)
            await notifier.record(NOTICE)
            await until_settled(store, notifier)
            store.clock = lambda: 1e12
            assert await notifier.send_due() == 0
        assert len(receiver.received) == 1

    asyncio.run(main())
    [row] = store.notices()
    assert (row["status"], row["attempts"], row["last_error"]) == ("given_up", 1, "HTTP 400")
    assert counted(metrics) == {"sent": 0, "failed": 0, "given_up": 0, "refused": 1}
    events = [r.getMessage().split(" ", 1)[0] for r in caplog.records]
    assert events == ["console.notify_refused"]


def test_two_senders_never_post_the_same_notice(store: Store) -> None:
    """Two console replicas on one database: each notice is taken by one of them."""
    metrics = ConsoleMetrics()

    async def main() -> None:
        receiver = Receiver([200])
        async with receiving(receiver) as base:
            first, second = (
                notify.Notifier(store, settings(f"{base}/hook"), metrics) for _ in range(2)
            )
            for review in range(10):
                await first.record({**NOTICE, "review": review})
            await asyncio.gather(first.send_due(), second.send_due())
        assert sorted(body["review"] for _, body in receiver.received) == list(range(10))

    asyncio.run(main())
    assert counted(metrics)["sent"] == 10


def test_a_notice_pending_when_the_console_stops_is_sent_after_it_starts_again(
    tmp_path: Path,
) -> None:
    """The console assigns an item while the receiver is down, stops, and a new console
    on the same database sends the notice once the receiver is back."""
    store = make_store(tmp_path)
    review_id = escalate(store, "restart-1")
    port = free_port()
    console_settings = settings(f"http://127.0.0.1:{port}/hook?token={TOKEN}")

    async def first_run() -> None:
        app = make_app(store, console_settings)
        async with TestClient(TestServer(app)) as client:
            await sign_in(client, "ann")
            csrf = await page_csrf(client, f"/reviews/{review_id}")
            response = await client.post(
                f"/reviews/{review_id}/assign",
                data={"csrf_token": csrf, "assignee": "rita"},
                allow_redirects=False,
            )
            assert response.status == 303  # the assignment stands, the receiver down
            for _ in range(100):  # the first POST has failed (no connection)
                if store.notices()[0]["attempts"] >= 1:
                    break
                await asyncio.sleep(0.02)
        assert app[CONSOLE].metrics.notifications.labels("failed")._value.get() >= 1

    asyncio.run(first_run())
    [row] = store.notices()
    assert row["status"] == "pending"
    assert store.review(review_id).claimed_by == "rita"

    async def second_run() -> None:
        receiver = Receiver([200])
        async with receiving(receiver, port):
            app = make_app(store, console_settings)
            async with TestClient(TestServer(app)) as client:
                for _ in range(200):
                    if receiver.received:
                        break
                    await asyncio.sleep(0.02)
                metrics = (await (await client.get("/metrics")).text()).splitlines()
        [(path, body)] = receiver.received
        assert path == "/hook"
        assert (body["kind"], body["to"], body["by"]) == ("assigned", ["rita"], "ann")
        assert 'oracle_console_notifications_total{outcome="sent"} 1.0' in metrics
        assert "oracle_console_notifications_pending 0.0" in metrics
        assert not any(TOKEN in line for line in metrics)

    asyncio.run(second_run())
    [row] = store.notices()
    assert row["status"] == "sent"
