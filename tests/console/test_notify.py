"""Per-person notifications (`oracle.console.notify`): a webhook receives the small JSON
body; Alertmanager's API receives one alert per person; a refusal or an unreachable
receiver is logged and reported, never raised."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from oracle.console import notify
from oracle.devchain import free_port


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[str, Any]]]]:
    received: list[tuple[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            received.append((self.path, json.loads(self.rfile.read(length))))
            self.send_response(500 if self.path == "/broken" else 200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()


NOTICE = notify.body("approval_needed", ["ann", "otto"], "rita", 7, "uma:0x1", "Q" * 500)


def test_a_webhook_receives_the_notice_as_it_is(
    receiver: tuple[str, list[tuple[str, Any]]],
) -> None:
    base, received = receiver
    assert asyncio.run(notify.send(f"{base}/hook", NOTICE, 5.0)) is True
    [(path, body)] = received
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


def test_alertmanager_receives_one_alert_per_person(
    receiver: tuple[str, list[tuple[str, Any]]],
) -> None:
    base, received = receiver
    assert asyncio.run(notify.send(f"{base}/api/v2/alerts", NOTICE, 5.0)) is True
    [(_, alerts)] = received
    assert [a["labels"] for a in alerts] == [
        {"alertname": "OracleConsoleNotice", "kind": "approval_needed", "person": p, "review": "7"}
        for p in ("ann", "otto")
    ]
    assert alerts[0]["annotations"]["summary"] == "approval needed: review 7 (by rita)"


def test_a_refusal_or_no_receiver_is_logged_not_raised(
    receiver: tuple[str, list[tuple[str, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    base, _ = receiver
    caplog.set_level(logging.WARNING, "oracle.console.notify")
    assert asyncio.run(notify.send(f"{base}/broken", NOTICE, 5.0)) is False
    nobody = f"http://127.0.0.1:{free_port()}/hook"
    assert asyncio.run(notify.send(nobody, NOTICE, 5.0)) is False
    events = [r.getMessage().split(" ", 1)[0] for r in caplog.records]
    assert events == ["console.notify_refused", "console.notify_failed"]
