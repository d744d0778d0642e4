"""The HTTP search providers: Tavily, Brave Search API, SearXNG (JSON) and GDELT DOC 2.0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from oracle.agents.http import request_json
from oracle.agents.search.base import SearchHit, SessionFactory, iso_date, text_of
from oracle.errors import ToolError


def _results(document: Any, *path: str) -> list[dict[str, Any]]:
    for key in path:
        document = document.get(key) if isinstance(document, dict) else None
    if document is None:
        return []
    if not isinstance(document, list):
        raise ToolError(f"unexpected answer shape (no list at {'.'.join(path)})")
    return [item for item in document if isinstance(item, dict)]


def _hit(
    provider: str, url: object, title: object, snippet: object, date: object
) -> SearchHit | None:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    return SearchHit(
        url=url,
        title=text_of(title, 300),
        snippet=text_of(snippet),
        published=iso_date(date),
        provider=provider,
    )


class _HttpProvider:
    name = "search"

    def __init__(
        self,
        session: SessionFactory,
        base_url: str,
        *,
        timeout_seconds: float,
        max_retries: int,
        max_retry_wait_seconds: float,
    ) -> None:
        self._session = session
        self._base_url = base_url
        self._timeout = timeout_seconds
        self._retries = max_retries
        self._max_wait = max_retry_wait_seconds

    async def _json(self, method: str, url: str, **kwargs: Any) -> Any:
        return await request_json(
            self._session(),
            self.name,
            method,
            url,
            timeout_seconds=self._timeout,
            max_retries=self._retries,
            max_retry_wait_seconds=self._max_wait,
            **kwargs,
        )

    def _hits(
        self,
        items: list[dict[str, Any]],
        max_results: int,
        *,
        snippet: str | Callable[[dict[str, Any]], object],
        published: str,
    ) -> list[SearchHit]:
        """The first `max_results` items with an http(s) `url` as hits. Every provider
        names the url and the title so; the snippet and the date are under its own keys
        (`snippet` may instead make the snippet from the item)."""
        hits = [
            hit
            for r in items
            if (
                hit := _hit(
                    self.name,
                    r.get("url"),
                    r.get("title"),
                    r.get(snippet) if isinstance(snippet, str) else snippet(r),
                    r.get(published),
                )
            )
            is not None
        ]
        return hits[:max_results]


class TavilySearch(_HttpProvider):
    """POST {base_url}/search with a bearer key; `results[].url/title/content/published_date`."""

    name = "tavily"

    def __init__(
        self,
        session: SessionFactory,
        base_url: str,
        api_key: SecretStr,
        *,
        search_depth: str = "basic",
        topic: str = "general",
        **kwargs: Any,
    ) -> None:
        super().__init__(session, base_url, **kwargs)
        self._key = api_key
        self._depth = search_depth
        self._topic = topic

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        document = await self._json(
            "POST",
            self._base_url.rstrip("/") + "/search",
            json_body={
                "query": query,
                "max_results": max_results,
                "search_depth": self._depth,
                "topic": self._topic,
            },
            headers={"Authorization": f"Bearer {self._key.get_secret_value()}"},
        )
        return self._hits(
            _results(document, "results"),
            max_results,
            snippet="content",
            published="published_date",
        )


class BraveSearch(_HttpProvider):
    """GET {base_url}?q=...&count=... with X-Subscription-Token; `web.results[]`."""

    name = "brave"

    def __init__(
        self, session: SessionFactory, base_url: str, api_key: SecretStr, **kwargs: Any
    ) -> None:
        super().__init__(session, base_url, **kwargs)
        self._key = api_key

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        document = await self._json(
            "GET",
            self._base_url,
            params={"q": query, "count": min(max_results, 20)},
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self._key.get_secret_value(),
            },
        )
        return self._hits(
            _results(document, "web", "results"),
            max_results,
            snippet="description",
            published="page_age",
        )


class SearxngSearch(_HttpProvider):
    """GET {base_url}/search?q=...&format=json on a self-hosted SearXNG; `results[]`."""

    name = "searxng"

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        document = await self._json(
            "GET",
            self._base_url.rstrip("/") + "/search",
            params={"q": query, "format": "json"},
            headers={"Accept": "application/json"},
        )
        return self._hits(
            _results(document, "results"), max_results, snippet="content", published="publishedDate"
        )


class GdeltSearch(_HttpProvider):
    """GDELT DOC 2.0 API, `mode=ArtList&format=json`; `articles[].url/title/seendate`."""

    name = "gdelt"

    def __init__(
        self, session: SessionFactory, base_url: str, *, timespan: str | None, **kwargs: Any
    ) -> None:
        super().__init__(session, base_url, **kwargs)
        self._timespan = timespan

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        params: dict[str, str | int] = {
            "query": query,
            "mode": "ArtList",
            "format": "json",
            "maxrecords": max(1, min(max_results, 250)),
            "sort": "HybridRel",
        }
        if self._timespan:
            params["timespan"] = self._timespan
        document = await self._json("GET", self._base_url, params=params)
        return self._hits(
            _results(document, "articles"),
            max_results,
            snippet=lambda r: f"{r.get('domain', '')} {r.get('sourcecountry', '')}".strip(),
            published="seendate",
        )
