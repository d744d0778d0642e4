"""Per-person notifications from the console: an item assigned to someone, a decision
awaiting a second person, a decision approved. Each is one small JSON POST to
`console.notify_webhook_url`, sent after the action committed and never in its way (a
failure is logged, the action stands).

The daemon reaches Alertmanager only through Prometheus' alerts; the console posts to it
directly when the URL is Alertmanager's own API (`.../api/v2/alerts`): one alert named
`OracleConsoleNotice` labelled with the person and the kind, which Alertmanager routes like
any other (by `person`). Any other URL receives the body as it is:

    {"kind": "assigned" | "approval_needed" | "approved", "to": ["ann"], "by": "rita",
     "review": 12, "market_id": "uma:0x..", "question": "...", "path": "/reviews/12"}
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import aiohttp

from oracle.log import emit

_LOG = logging.getLogger("oracle.console.notify")
_QUESTION_CHARACTERS = 300


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


async def send(url: str, notice: dict[str, Any], timeout: float) -> bool:
    """POST `notice` to `url`; whether it was accepted (2xx). Never raises."""
    payload: Any = (
        alertmanager_alerts(notice) if url.rstrip("/").endswith("/api/v2/alerts") else notice
    )
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.post(url, json=payload) as response,
        ):
            ok = 200 <= response.status < 300
            if not ok:
                emit(
                    _LOG,
                    logging.WARNING,
                    "console.notify_refused",
                    status=response.status,
                    kind=notice["kind"],
                    review=notice["review"],
                )
            return ok
    except (aiohttp.ClientError, TimeoutError) as error:
        emit(
            _LOG,
            logging.WARNING,
            "console.notify_failed",
            error=type(error).__name__,
            kind=notice["kind"],
            review=notice["review"],
        )
        return False
