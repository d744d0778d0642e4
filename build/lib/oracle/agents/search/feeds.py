"""RSS 2.0 and Atom feeds as a search provider: the configured feeds' items, ranked by how
many of the query's words they contain. Feeds are cached for `cache_seconds`."""

from __future__ import annotations

import asyncio
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

import aiohttp

from oracle.agents.http import read_capped
from oracle.agents.search.base import SearchHit, SessionFactory, iso_date, text_of
from oracle.errors import ToolError

MAX_FEED_BYTES = 5_000_000
_WORD = re.compile(r"\w{3,}", re.UNICODE)
# `[^<>]`, not `[^>]`: a failed match stops at the next `<`, so '<' * n is linear, not n².
_TAG = re.compile(r"<[^<>]*>")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].lower()


def _child_text(element: ET.Element, *names: str) -> str:
    for child in element:
        if _local(child.tag) in names:
            return "".join(child.itertext())
    return ""


def _atom_link(entry: ET.Element) -> str:
    fallback = ""
    for child in entry:
        if _local(child.tag) == "link":
            href = child.get("href") or (child.text or "")
            if child.get("rel", "alternate") == "alternate":
                return href.strip()
            fallback = fallback or href.strip()
    return fallback


def parse_feed(body: bytes, provider: str = "rss") -> list[SearchHit]:
    """Items of an RSS 2.0 or Atom document; ToolError when it is neither."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as error:
        raise ToolError(f"{provider}: the feed is not XML ({error})") from None
    except (LookupError, ValueError) as error:  # a declared encoding Python cannot use
        raise ToolError(
            f"{provider}: the feed is not XML (undecodable: {type(error).__name__})"
        ) from None
    hits = []
    for element in root.iter():
        kind = _local(element.tag)
        if kind == "item":
            link = _child_text(element, "link").strip()
            summary = _child_text(element, "description")
            date = _child_text(element, "pubdate", "date")
        elif kind == "entry":
            link = _atom_link(element)
            summary = _child_text(element, "summary", "content")
            date = _child_text(element, "published", "updated")
        else:
            continue
        if not link.startswith(("http://", "https://")):
            continue
        hits.append(
            SearchHit(
                url=link,
                title=text_of(_child_text(element, "title"), 300),
                snippet=text_of(_TAG.sub(" ", summary)),
                published=iso_date(date.strip()),
                provider=provider,
            )
        )
    return hits


class FeedSearch:
    name = "rss"

    def __init__(
        self,
        session: SessionFactory,
        feeds: Sequence[str],
        *,
        timeout_seconds: float,
        cache_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._session = session
        self._feeds = tuple(feeds)
        self._timeout = timeout_seconds
        self._cache_seconds = cache_seconds
        self._clock = clock
        self._cache: tuple[float, list[SearchHit], list[str]] | None = None

    async def _fetch(self, url: str) -> list[SearchHit]:
        try:
            async with asyncio.timeout(self._timeout), self._session().get(url) as response:
                if response.status != 200:
                    raise ToolError(f"rss: {url}: HTTP {response.status}")
                # (content.read(n) returns what has arrived, not n bytes: feeds were cut.)
                body = await read_capped(response, MAX_FEED_BYTES, f"rss: {url}: the feed")
        except TimeoutError:
            raise ToolError(f"rss: {url}: timed out after {self._timeout:g} s") from None
        except aiohttp.ClientError as error:
            raise ToolError(f"rss: {url}: {type(error).__name__}") from None
        return parse_feed(body, self.name)

    async def _items(self) -> tuple[list[SearchHit], list[str]]:
        now = self._clock()
        if self._cache is not None and now - self._cache[0] < self._cache_seconds:
            return self._cache[1], self._cache[2]
        outcomes = await asyncio.gather(
            *(self._fetch(url) for url in self._feeds), return_exceptions=True
        )
        items: list[SearchHit] = []
        errors: list[str] = []
        for outcome in outcomes:
            if isinstance(outcome, ToolError):
                errors.append(str(outcome))
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                items.extend(outcome)
        if items or not errors:
            self._cache = (now, items, errors)
        return items, errors

    async def search(self, query: str, max_results: int) -> list[SearchHit]:
        items, errors = await self._items()
        if not items and errors:
            raise ToolError("; ".join(errors))
        words = {w.lower() for w in _WORD.findall(query)}
        scored = []
        for index, item in enumerate(items):
            found = {w.lower() for w in _WORD.findall(f"{item.title} {item.snippet}")}
            score = len(words & found)
            if score:
                scored.append((-score, index, item))
        scored.sort(key=lambda entry: (entry[0], entry[1]))
        return [item for _, _, item in scored[:max_results]]
