"""The search-provider interface.

Contract of :class:`SearchProvider`: `search(query, max_results)` returns at most
`max_results` hits, best first, or raises :class:`~oracle.agents.tools.ToolError` with a
message safe to show the model (it names the provider and the problem, never a key).
A provider uses the aiohttp session its agent gives it (through a factory) and holds no other
connections.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Protocol

import aiohttp

# Providers get their agent's session lazily: a session must be made inside the event loop.
SessionFactory = Callable[[], aiohttp.ClientSession]


@dataclass(frozen=True)
class SearchHit:
    url: str
    title: str
    snippet: str
    published: str | None
    provider: str


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, max_results: int) -> list[SearchHit]: ...


def iso_date(value: object) -> str | None:
    """An ISO 8601 date-time from the formats search APIs use; None when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    for parse in (_iso, _gdelt, _rfc822):
        parsed = parse(text)
        if parsed is not None:
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            try:
                return parsed.astimezone(UTC).isoformat(timespec="seconds")
            except OverflowError:  # 0001-01-01T00:00:00+14:00 is before year 1 in UTC
                return None
    return None


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _gdelt(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _rfc822(text: str) -> datetime | None:
    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None


def text_of(value: object, limit: int = 600) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(value.split())[:limit]
