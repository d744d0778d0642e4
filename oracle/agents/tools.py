"""The research tools of an `llm` agent: `search`, `open_page` and `read_text`, and the
sources an answer may cite.

A tool never ends a research run: whatever it meets (a failing provider, a hostile page,
a bug on outside data) becomes an error result for the model, fenced as untrusted text;
an unexpected exception is also logged (`agent.tool_crashed`) and counted. Everything a
run's tools returned is remembered in its `ResearchRun`, so an answer can cite only URLs
the tools actually returned, classified by where their text came from (an opened page's
URL after redirects).

A cited source is *read* only when its page was opened in this run and its quote is in
the text the tools showed the model (`oracle.core.evidence.quote_found`); a search hit
never opened, or a quote not found in what was shown, is kept as *seen, not read* and
counts for nothing. A URL whose page failed to load in this run (and never loaded) is
dropped: it is no source.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from oracle.agents.answer import FinalAnswer
from oracle.agents.classify import SourceClassifier
from oracle.agents.metrics import AgentMetrics, RunStats
from oracle.agents.pages import Page, PageReader
from oracle.agents.prompts import tool_error, untrusted
from oracle.agents.providers.base import ToolCall, ToolResult, ToolSpec
from oracle.agents.search.base import SearchHit, SearchProvider
from oracle.core.evidence import quote_found
from oracle.core.models import ResearchSource
from oracle.core.urls import normalize_url
from oracle.errors import JsonError, ToolError
from oracle.safe_json import loads
from oracle.scrub import scrub

logger = logging.getLogger("oracle.agents.llm")

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search",
        "Search the web and news for pages about a query. Returns titles, URLs, dates and "
        "snippets as untrusted data.",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["query"],
            "properties": {"query": {"type": "string", "description": "What to search for."}},
        },
    ),
    ToolSpec(
        "open_page",
        "Fetch a web page and return its title, date and the beginning of its text as "
        "untrusted data.",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["url"],
            "properties": {"url": {"type": "string", "description": "An http(s) URL."}},
        },
    ),
    ToolSpec(
        "read_text",
        "Read more of a page's text, from a character offset.",
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["url", "offset"],
            "properties": {
                "url": {"type": "string"},
                "offset": {"type": "integer", "description": "Character offset, from 0."},
            },
        },
    ),
)
TOOL_NAMES = tuple(tool.name for tool in TOOLS)


@dataclass
class ResearchRun:
    """One research run's state: its statistics, deadline, fence nonce, and what its tools
    returned (URLs seen, titles, pages read)."""

    stats: RunStats
    deadline: float
    nonce: str
    seen: set[str] = field(default_factory=set)
    titles: dict[str, str] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)
    # URLs whose page failed to load in this run: never a source.
    failed: set[str] = field(default_factory=set)
    # Per page (its URL after redirects, normalized): the character ranges shown.
    shown: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # Sources of the agent's standing answer (a debate round): cited again unread, they
    # stay as they were.
    held: dict[str, ResearchSource] = field(default_factory=dict)

    def read_text(self, page: Page) -> str:
        """The parts of `page`'s text the tools showed the model, joined where they meet."""
        ranges = sorted(self.shown.get(normalize_url(page.url), ()))
        parts: list[str] = []
        end = -1
        for start, stop in ranges:
            if start <= end:  # overlaps or touches the previous range
                if stop > end:
                    parts[-1] += page.text[end:stop]
                    end = stop
                continue
            parts.append(page.text[start:stop])
            end = stop
        return "\n\n".join(parts)


class ResearchTools:
    """One agent's tools: its search providers, page reader and source classifier."""

    def __init__(
        self,
        *,
        agent: str,
        search: Sequence[SearchProvider],
        pages: PageReader,
        classifier: SourceClassifier,
        metrics: AgentMetrics,
        max_tool_calls: int,
        max_results_per_search: int,
        read_chars: int,
    ) -> None:
        self._agent = agent
        self._search = list(search)
        self._pages = pages
        self._classifier = classifier
        self._metrics = metrics
        self._max_tool_calls = max_tool_calls
        self._max_results = max_results_per_search
        self._read_chars = read_chars

    async def call(self, calls: Sequence[ToolCall], run: ResearchRun) -> list[ToolResult]:
        """Every call's result, in order; calls past the tool-call budget are refused."""
        allowed: list[ToolCall] = []
        refused: dict[str, ToolResult] = {}
        for call in calls:
            if run.stats.tool_calls >= self._max_tool_calls:
                refused[call.id] = ToolResult(
                    call.id,
                    call.name,
                    "error: the tool-call budget is used up; no more tools this run",
                    is_error=True,
                )
                continue
            run.stats.tool_calls += 1
            allowed.append(call)
        # A TaskGroup, not gather: should a tool raise unexpectedly, its siblings are
        # cancelled rather than left running after the run has failed.
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self._call_tool(call, run)) for call in allowed]
        by_id = {task.result().call_id: task.result() for task in tasks} | refused
        # Whatever a tool returns or says went wrong is outside text: a configured secret
        # a server echoed never reaches the model (oracle.scrub).
        return [
            ToolResult(r.call_id, r.name, scrub(r.content), r.is_error)
            for r in (by_id[call.id] for call in calls)
        ]

    async def _call_tool(self, call: ToolCall, run: ResearchRun) -> ToolResult:
        """The tool's result; whatever it raises (but cancellation) is an error result."""
        tool = call.name if call.name in TOOL_NAMES else "unknown"
        ok = False
        try:
            content = await self._run_tool(call, run)
            ok = True
            return ToolResult(call.id, call.name, content)
        except ToolError as error:
            message = str(error)
        except Exception as error:
            message = self._crashed(tool, error, run)
        finally:
            self._metrics.record_tool(self._agent, tool, ok)
        run.stats.tool_errors += 1
        return ToolResult(call.id, call.name, tool_error(run.nonce, message), is_error=True)

    def _crashed(self, tool: str, error: Exception, run: ResearchRun) -> str:
        """A tool raised something other than ToolError: a bug, met on outside data. The
        run goes on (the model hears the tool failed); the log and a metric say so loudly."""
        run.stats.tool_crashes += 1
        self._metrics.record_tool_crash(self._agent, tool)
        logger.error(
            "agent.tool_crashed agent=%s tool=%s error=%s",
            self._agent,
            tool,
            type(error).__name__,
            exc_info=error,
            extra={
                "event": "agent.tool_crashed",
                "fields": {"agent": self._agent, "tool": tool, "error": type(error).__name__},
            },
        )
        return f"the tool failed (internal error: {type(error).__name__}); try something else"

    async def _run_tool(self, call: ToolCall, run: ResearchRun) -> str:
        try:
            arguments = loads(call.arguments or "{}")
        except JsonError as error:
            raise ToolError(f"the arguments are {error}") from None
        if not isinstance(arguments, dict):
            raise ToolError("the arguments must be a JSON object")
        match call.name:
            case "search":
                return await self._tool_search(arguments, run)
            case "open_page":
                return await self._tool_open(arguments, run)
            case "read_text":
                return await self._tool_read(arguments, run)
            case _:
                raise ToolError(
                    f"unknown tool {call.name[:80]!r}; the tools are {', '.join(TOOL_NAMES)}"
                )

    @staticmethod
    def _string(arguments: dict[str, Any], name: str, limit: int) -> str:
        value = arguments.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ToolError(f"{name}: a non-empty string is required")
        return value.strip()[:limit]

    async def _tool_search(self, arguments: dict[str, Any], run: ResearchRun) -> str:
        query = self._string(arguments, "query", 400)
        run.stats.searches += 1
        wanted = self._max_results
        outcomes = await asyncio.gather(
            *(provider.search(query, wanted) for provider in self._search),
            return_exceptions=True,
        )
        lists: list[list[SearchHit]] = []
        errors: list[str] = []
        for provider, outcome in zip(self._search, outcomes, strict=True):
            if isinstance(outcome, ToolError):
                errors.append(str(outcome))
            elif isinstance(outcome, Exception):  # one provider's bug spoils only its results
                errors.append(f"{provider.name}: {self._crashed('search', outcome, run)}")
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                lists.append(outcome)
        if errors and not lists:
            raise ToolError("; ".join(errors))
        hits = _interleave(lists, wanted)
        lines = []
        for index, hit in enumerate(hits, 1):
            key = normalize_url(hit.url)
            run.seen.add(key)
            run.titles.setdefault(key, hit.title)
            lines.append(
                f"[{index}] {hit.title}\nURL: {hit.url}\nPublished: {hit.published or 'unknown'}"
                f"\nFound by: {hit.provider}\nSnippet: {hit.snippet}"
            )
        body = "\n\n".join(lines) if lines else "(no results)"
        results = untrusted(run.nonce, "search_results", body, query=query)
        if not errors:
            return results
        return f"{results}\nSome search providers failed; their errors follow.\n" + untrusted(
            run.nonce, "search_errors", "\n".join(errors)
        )

    async def _page(self, url: str, run: ResearchRun) -> Page:
        try:
            key = normalize_url(url)
        except ValueError as error:
            raise ToolError(f"url: {error}") from None
        page = run.pages.get(key)
        if page is None:
            run.stats.pages_opened += 1
            try:
                page = await self._pages.fetch(url)
            except BaseException:
                run.failed.add(key)  # a page that failed to load is never a source
                raise
            run.failed.discard(key)
            for seen in {key, normalize_url(page.url)}:
                run.pages[seen] = page
                run.seen.add(seen)
                if page.title:
                    run.titles[seen] = page.title
        return page

    def _excerpt(self, page: Page, offset: int, run: ResearchRun) -> str:
        end = min(offset + self._read_chars, len(page.text))
        run.shown.setdefault(normalize_url(page.url), []).append((offset, end))
        more = f"; more with read_text offset {end}" if end < len(page.text) else "; end of text"
        header = (
            f"Page {page.url} | title: {page.title or '(none)'} | published: "
            f"{page.published or 'unknown'} | characters {offset}-{end} of {len(page.text)}{more}"
        )
        return untrusted(run.nonce, "page", f"{header}\n\n{page.text[offset:end]}", url=page.url)

    async def _tool_open(self, arguments: dict[str, Any], run: ResearchRun) -> str:
        page = await self._page(self._string(arguments, "url", 2000), run)
        return self._excerpt(page, 0, run)

    async def _tool_read(self, arguments: dict[str, Any], run: ResearchRun) -> str:
        page = await self._page(self._string(arguments, "url", 2000), run)
        offset = arguments.get("offset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ToolError("offset: a non-negative integer is required")
        if offset >= len(page.text) and page.text:
            raise ToolError(f"offset: the page has only {len(page.text)} characters")
        return self._excerpt(page, offset, run)

    def cited_sources(self, answer: FinalAnswer, run: ResearchRun) -> tuple[ResearchSource, ...]:
        """The answer's sources this run's tools actually returned (the others are dropped
        and counted), each recorded and classified by where its text came from."""
        sources: list[ResearchSource] = []
        used: set[str] = set()
        for cited in answer.sources:
            try:
                key = normalize_url(cited.url)
            except ValueError:
                run.stats.sources_dropped += 1
                continue
            page = run.pages.get(key)
            if key not in run.seen or (page is None and key in run.failed):
                run.stats.sources_dropped += 1
                continue
            if page is None and key in run.held:  # its standing answer's, not read again
                if key not in used:
                    used.add(key)
                    sources.append(run.held[key])
                continue
            # Cited and classified by where its text came from: an opened page's URL after
            # redirects (an official URL may redirect to a blog), else the URL as found.
            url = page.url if page is not None else cited.url
            key = normalize_url(url)
            if key in used:
                continue
            used.add(key)
            read = page is not None and quote_found(cited.quote, run.read_text(page))
            if not read:
                run.stats.sources_unread += 1
            classification = self._classifier.classify(url)
            sources.append(
                ResearchSource(
                    url=url,
                    title=(cited.title.strip() or run.titles.get(key, ""))[:500],
                    category=classification.category,
                    credibility_score=classification.credibility,
                    relevance_score=cited.relevance,
                    published_at=cited.published_date,
                    quote=cited.quote.strip()[:2000],
                    read=read,
                )
            )
        return tuple(sources)

    async def aclose(self) -> None:
        await self._pages.aclose()


def _interleave(lists: Sequence[Sequence[SearchHit]], limit: int) -> list[SearchHit]:
    """Round-robin over the providers' lists, each URL once, at most `limit` hits."""
    merged: list[SearchHit] = []
    seen: set[str] = set()
    for rank in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if rank >= len(items):
                continue
            try:
                key = normalize_url(items[rank].url)
            except ValueError:
                continue
            if key not in seen:
                seen.add(key)
                merged.append(items[rank])
            if len(merged) >= limit:
                return merged
    return merged
