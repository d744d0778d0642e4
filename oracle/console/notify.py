"""Per-person notifications from the console: an item assigned to someone, a decision
awaiting a second person, a decision approved. Each is one small JSON POST to
`console.notify_webhook_url`, recorded in the database (`console_notice`) after the action
committed and sent from there, never in the action's way.

Delivery is reliable: a POST that fails (no connection, a timeout, 5xx, 408, 429) is tried
again with doubling waits until `console.notify_max_attempts` have failed, then given up
(`console.notify_given_up`); any other 4xx is a refusal that trying again would not change,
given up at once (`console.notify_refused`). A notice accepted (2xx) is marked sent and
never sent again; one still pending when the console stops is sent after it starts again
(or by another replica). Each outcome is counted in `oracle_console_notifications_total`.
Log lines and rows name the notice, the error's type or the HTTP status, never the URL
(a chat webhook's URL is its credential).

The daemon reaches Alertmanager only through Prometheus' alerts; the console posts to it
directly when the URL is Alertmanager's own API (`.../api/v2/alerts`): one alert named
`OracleConsoleNotice` labelled with the person and the kind, which Alertmanager routes like
any other (by `person`). Any other URL receives the body as it is:

    {"kind": "assigned" | "approval_needed" | "approved", "to": ["ann"], "by": "rita",
     "review": 12, "market_id": "uma:0x..", "question": "...", "path": "/reviews/12"}
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import aiohttp
from sqlalchemy.exc import SQLAlchemyError

from oracle.core.failures import RetryPolicy, backoff_delay
from oracle.log import emit

if TYPE_CHECKING:
    from oracle.console.metrics import ConsoleMetrics
    from oracle.console.settings import ConsoleSettings
    from oracle.store.console import ConsoleRecords, DueNotice

_LOG = logging.getLogger("oracle.console.notify")
_QUESTION_CHARACTERS = 300
# Statuses that say "not now" rather than "never": tried again like a 5xx.
_RETRYABLE_CLIENT_STATUSES = frozenset({408, 429})
# A notice taken to be sent is held this much longer than its POST may take: a console
# that dies mid-POST leaves it to be tried again after that, not at once by another.
_HOLD_MARGIN_SECONDS = 30.0
# How often the sender looks for notices other replicas recorded, at the longest.
_POLL_SECONDS = 5.0


def body(  # noqa: PLR0917 (the notice's fields, each named where it is called)
    kind: str, to: Sequence[str], by: str, review: int, market_id: str, question: str
) -> dict[str, Any]:
    return {
        "kind": kind,
        "to": list(to),
        "by": by,
        "review": review,
        "market_id": market_id,
        "question": question[:_QUESTION_CHARACTERS],
        "path": f"/reviews/{review}",
    }


def alertmanager_alerts(notice: dict[str, Any]) -> list[dict[str, Any]]:
    """The notice as Alertmanager alerts, one per person (routed by the `person` label)."""
    return [
        {
            "labels": {
                "alertname": "OracleConsoleNotice",
                "kind": notice["kind"],
                "person": person,
                "review": str(notice["review"]),
            },
            "annotations": {
                "summary": f"{notice['kind'].replace('_', ' ')}: review {notice['review']} "
                f"(by {notice['by']})",
                "question": notice["question"],
                "path": notice["path"],
            },
        }
        for person in notice["to"]
    ]


class Outcome(StrEnum):
    SENT = "sent"
    FAILED = "failed"  # may succeed if tried again
    REFUSED = "refused"  # a 4xx that trying again would not change


@dataclass(frozen=True)
class Attempt:
    """One POST's outcome; `error` names what failed (an error type or "HTTP <status>")."""

    outcome: Outcome
    error: str = ""


def outcome_of_status(status: int) -> Outcome:
    if 200 <= status < 300:
        return Outcome.SENT
    if 400 <= status < 500 and status not in _RETRYABLE_CLIENT_STATUSES:
        return Outcome.REFUSED
    return Outcome.FAILED


async def send(url: str, notice: dict[str, Any], timeout: float) -> Attempt:
    """POST `notice` to `url` once. Never raises."""
    payload: Any = (
        alertmanager_alerts(notice) if url.rstrip("/").endswith("/api/v2/alerts") else notice
    )
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.post(url, json=payload, allow_redirects=False) as response,
        ):
            outcome = outcome_of_status(response.status)
            return Attempt(outcome, "" if outcome is Outcome.SENT else f"HTTP {response.status}")
    except (aiohttp.ClientError, TimeoutError) as error:
        # The type only: an error's text names the host and may carry the URL's secrets.
        return Attempt(Outcome.FAILED, type(error).__name__)


class Notifier:
    """Records notices and sends them from the database, retrying with back-off."""

    def __init__(
        self, store: ConsoleRecords, settings: ConsoleSettings, metrics: ConsoleMetrics
    ) -> None:
        self._store = store
        self._settings = settings
        self._metrics = metrics
        self._policy = RetryPolicy(
            settings.notify_max_attempts,
            settings.notify_retry_backoff_seconds,
            settings.notify_retry_backoff_max_seconds,
        )
        self._wake = asyncio.Event()

    @property
    def enabled(self) -> bool:
        return self._settings.notify_webhook_url is not None

    async def record(self, notice: dict[str, Any]) -> None:
        """Keep `notice` to be sent (after the action it tells of has committed)."""
        await asyncio.to_thread(self._store.queue_notice, notice)
        self._wake.set()

    async def run(self, closing: asyncio.Event) -> None:
        """Send due notices until `closing` is set."""
        while not closing.is_set():
            self._wake.clear()  # before looking: a notice recorded from now on wakes it
            wait = _POLL_SECONDS
            try:
                await self.send_due(closing)
                _, soonest = await asyncio.to_thread(self._store.pending_notices)
                if soonest is not None:
                    wait = min(max(soonest - self._store.clock(), 0.0), _POLL_SECONDS)
            except SQLAlchemyError as error:  # the database away for a while: try later
                emit(
                    _LOG, logging.WARNING, "console.notify_store_error", error=type(error).__name__
                )
            waker = asyncio.ensure_future(self._wake.wait())
            closer = asyncio.ensure_future(closing.wait())
            try:
                await asyncio.wait(
                    {waker, closer}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                waker.cancel()
                closer.cancel()

    async def send_due(self, closing: asyncio.Event | None = None) -> int:
        """POST every notice now due, one at a time (so a stop between two leaves the rest
        untouched, not held), until none is due or `closing` is set; how many were tried."""
        url_setting = self._settings.notify_webhook_url
        if url_setting is None:
            return 0
        url = url_setting.get_secret_value()
        timeout = self._settings.notify_timeout_seconds
        tried = 0
        while closing is None or not closing.is_set():
            taken = await asyncio.to_thread(
                self._store.take_due_notices, timeout + _HOLD_MARGIN_SECONDS, 1
            )
            if not taken:
                break
            [notice] = taken
            await self._settle(notice, await send(url, notice.body, timeout))
            tried += 1
        return tried

    async def _settle(self, notice: DueNotice, attempt: Attempt) -> None:
        fields = {
            "notice": notice.id,
            "kind": notice.body["kind"],
            "review": notice.body["review"],
            "attempts": notice.attempts,
        }
        if attempt.outcome is Outcome.SENT:
            await asyncio.to_thread(self._store.notice_sent, notice.id)
            self._metrics.notifications.labels("sent").inc()
            emit(_LOG, logging.INFO, "console.notify_sent", **fields)
            return
        if attempt.outcome is Outcome.REFUSED:
            await asyncio.to_thread(self._store.notice_failed, notice.id, attempt.error, None)
            self._metrics.notifications.labels("refused").inc()
            emit(_LOG, logging.ERROR, "console.notify_refused", error=attempt.error, **fields)
            return
        if notice.attempts >= self._policy.max_attempts:
            await asyncio.to_thread(self._store.notice_failed, notice.id, attempt.error, None)
            self._metrics.notifications.labels("given_up").inc()
            emit(_LOG, logging.ERROR, "console.notify_given_up", error=attempt.error, **fields)
            return
        delay = backoff_delay(notice.attempts, self._policy)
        retry_at = self._store.clock() + delay
        await asyncio.to_thread(self._store.notice_failed, notice.id, attempt.error, retry_at)
        self._metrics.notifications.labels("failed").inc()
        emit(
            _LOG,
            logging.WARNING,
            "console.notify_failed",
            error=attempt.error,
            retry_in=round(delay, 3),
            **fields,
        )
