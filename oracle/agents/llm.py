"""The `llm` agent kind: a language model researches with tools, then answers in a schema.

One run: (1) a market whose event is not due yet on the agent's clock gets UNDETERMINED,
"too early", without asking the model; (2) the research loop, in which the model calls
`search`, `open_page` and `read_text` until it stops or a budget (tool calls, tokens,
wall time less `answer_reserve_seconds`) runs out; (3) the final answer, requested as
structured output against a schema built from the market's outcomes, validated, and
retried once with the validation error; a second failure is an agent failure.

Sources in the answer keep only URLs this run's tools actually returned, each recorded
and classified by where its text came from (an opened page's URL after redirects);
category and credibility come from the oracle's domain rules, relevance from the model.
Tokens, cost, tool calls and time of each run are kept in `last_run`, passed to `on_run`
hooks, logged as `agent.research_run`, and counted in `oracle.agents.metrics`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from aiohttp.abc import AbstractResolver
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field, model_validator

from oracle.agents.answer import AnswerInvalid, FinalAnswer, answer_schema, parse_answer
from oracle.agents.base import IsolatedHttpAgent
from oracle.agents.classify import ClassificationSettings, SourceClassifier
from oracle.agents.metrics import AGENT_METRICS, AgentMetrics, RunStats
from oracle.agents.names import AgentName, Seconds
from oracle.agents.pages import Page, PageReader, PageSettings
from oracle.agents.prompts import (
    FINAL_ANSWER_REQUEST,
    new_nonce,
    question_prompt,
    retry_request,
    system_prompt,
    tool_error,
    untrusted,
)
from oracle.agents.providers.base import (
    AssistantTurn,
    ChatModel,
    Entry,
    ModelTurn,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserText,
    entry_texts,
    estimate_tokens,
)
from oracle.agents.providers.families import infer_model_family, infer_provider
from oracle.agents.question import parse_question, too_early, too_early_reasoning
from oracle.agents.search.base import SearchHit, SearchProvider
from oracle.agents.search.config import SearchConfig, build_search_provider
from oracle.agents.secrets import SecretRef
from oracle.core.models import UNDETERMINED, AgentResult, Market, ResearchSource
from oracle.core.urls import normalize_url
from oracle.errors import AgentError, ConfigError, JsonError, ModelError, ToolError
from oracle.log import emit
from oracle.safe_json import loads

logger = logging.getLogger(__name__)

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
MAX_REASONING_CHARS = 10_000


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tool_calls: int = Field(12, ge=0, le=500)
    max_tokens: int = Field(
        80_000, ge=1000, description="Input plus output tokens of the research loop."
    )
    max_output_tokens: int = Field(2048, ge=64, description="Per model request.")
    wall_seconds: Seconds = 240.0
    answer_reserve_seconds: float = Field(
        30.0, ge=0, allow_inf_nan=False, description="Research stops this long before the end."
    )

    @model_validator(mode="after")
    def _reserve_fits(self) -> Budget:
        if self.answer_reserve_seconds >= self.wall_seconds:
            raise ValueError("answer_reserve_seconds must be less than wall_seconds")
        return self


class Pricing(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_million_tokens: float = Field(0.0, ge=0, allow_inf_nan=False)
    output_per_million_tokens: float = Field(0.0, ge=0, allow_inf_nan=False)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million_tokens
            + output_tokens * self.output_per_million_tokens
        ) / 1_000_000


class LlmAgentConfig(SecretRef):
    """An agent driven by a language model (see this module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: AgentName
    kind: Literal["llm"]
    api: Literal["openai", "anthropic"] = "openai"
    base_url: AnyHttpUrl | None = Field(
        None, description="OpenAI-compatible endpoint (vLLM, Ollama, OpenRouter, ...)."
    )
    model: str = Field(min_length=1)
    model_family: str | None = Field(None, description="Default: inferred from the model name.")
    provider: str | None = Field(None, description="Default: the API or the endpoint's host.")
    temperature: float | None = Field(0.2, ge=0.0, le=2.0, allow_inf_nan=False)
    persona: str = Field("", max_length=2000)
    request_timeout_seconds: Seconds = 90.0
    max_retries: int = Field(2, ge=0, le=10, description="SDK retries (429, 5xx).")
    output_token_field: Literal["max_tokens", "max_completion_tokens"] = "max_completion_tokens"
    budget: Budget = Budget()
    pricing: Pricing = Pricing()
    search: tuple[SearchConfig, ...] = Field(min_length=1)
    max_results_per_search: int = Field(8, ge=1, le=50)
    read_chars: int = Field(6000, ge=500, le=100_000, description="Text per page read.")
    pages: PageSettings = PageSettings()
    classification: ClassificationSettings = ClassificationSettings()

    @property
    def family(self) -> str:
        return self.model_family or infer_model_family(self.model)

    @property
    def provider_name(self) -> str:
        return self.provider or infer_provider(
            self.api, str(self.base_url) if self.base_url else None
        )


@dataclass
class _Run:
    stats: RunStats
    deadline: float
    nonce: str
    seen: set[str] = field(default_factory=set)
    titles: dict[str, str] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)


class LlmAgent(IsolatedHttpAgent):
    kind = "llm"

    def __init__(
        self,
        config: LlmAgentConfig,
        *,
        model: ChatModel | None = None,
        clock: Callable[[], float] = time.time,
        metrics: AgentMetrics | None = None,
        resolver: AbstractResolver | None = None,
    ) -> None:
        super().__init__(config.name)
        self.config = config
        self.provider: str | None = config.provider_name
        self.model_family: str | None = config.family
        where = f"agents[{config.name}]"
        self._model = model or _build_model(config, where)
        self._search: list[SearchProvider] = [
            build_search_provider(item, lambda: self.session, f"{where}.search[{index}]")
            for index, item in enumerate(config.search)
        ]
        self._pages = PageReader(config.pages, resolver)
        self._classifier = SourceClassifier(config.classification)
        self._clock = clock
        self._metrics = metrics or AGENT_METRICS
        self.last_run: RunStats | None = None
        self.on_run: list[Callable[[RunStats], None]] = []

    def __repr__(self) -> str:
        return f"LlmAgent(name={self.name!r}, model={self.config.model!r})"

    async def research(self, market: Market) -> AgentResult:
        stats = RunStats(agent=self.name, market_id=market.id, model=self.config.model)
        started = time.monotonic()
        try:
            now = self._clock()
            if too_early(market, now):
                stats.result = "too_early"
                return self._result(UNDETERMINED, 1.0, too_early_reasoning(market, now), ())
            budget = self.config.budget
            run = _Run(stats, started + budget.wall_seconds, new_nonce())
            try:
                async with asyncio.timeout(budget.wall_seconds):
                    result = await self._run(market, now, run)
            except TimeoutError:
                raise AgentError(
                    f"wall-time budget of {budget.wall_seconds:g} s exhausted"
                ) from None
            except ModelError as error:
                raise AgentError(str(error)) from None
            stats.result = "answered"
            return result
        except AgentError as error:
            stats.error = str(error)
            raise
        finally:
            stats.wall_seconds = time.monotonic() - started
            stats.cost_usd = self.config.pricing.cost(stats.input_tokens, stats.output_tokens)
            self._finish(stats)

    def _finish(self, stats: RunStats) -> None:
        self.last_run = stats
        self._metrics.record_run(stats)
        emit(
            logger,
            logging.INFO,
            "agent.research_run",
            agent=stats.agent,
            market=stats.market_id,
            model=stats.model,
            result=stats.result,
            input_tokens=stats.input_tokens,
            output_tokens=stats.output_tokens,
            cost_usd=round(stats.cost_usd, 6),
            model_calls=stats.model_calls,
            tool_calls=stats.tool_calls,
            wall_seconds=round(stats.wall_seconds, 3),
            error=stats.error,
        )
        for hook in self.on_run:
            hook(stats)

    async def _complete(
        self, run: _Run, transcript: Sequence[Entry], *, final: bool, schema: dict[str, Any]
    ) -> ModelTurn:
        system = system_prompt(self.config.persona, run.nonce)
        turn = await self._model.complete(
            system,
            transcript,
            TOOLS,
            max_output_tokens=self.config.budget.max_output_tokens,
            allow_tools=not final,
            answer_schema=schema if final else None,
        )
        run.stats.model_calls += 1
        used_in, used_out = turn.usage.input_tokens, turn.usage.output_tokens
        if used_in is None or used_out is None:
            # A server that reports no usable count must not switch the token budget off.
            run.stats.estimated_usage_calls += 1
        if used_in is None:
            sent = [system, *(text for entry in transcript for text in entry_texts(entry))]
            sent += [json.dumps(schema)] if final else []
            used_in = estimate_tokens(*sent, *(json.dumps(asdict(tool)) for tool in TOOLS))
        if used_out is None:
            used_out = estimate_tokens(turn.text, *entry_texts(AssistantTurn("", turn.tool_calls)))
        run.stats.input_tokens += used_in
        run.stats.output_tokens += used_out
        return turn

    def _research_over(self, run: _Run) -> bool:
        budget = self.config.budget
        return (
            run.stats.tool_calls >= budget.max_tool_calls
            or run.stats.total_tokens >= budget.max_tokens
            or time.monotonic() >= run.deadline - budget.answer_reserve_seconds
        )

    async def _run(self, market: Market, now: float, run: _Run) -> AgentResult:
        question = parse_question(market.question, market.criteria)
        schema = answer_schema(market.answerable)
        transcript: list[Entry] = [UserText(question_prompt(market, question, now, run.nonce))]
        while not self._research_over(run):
            turn = await self._complete(run, transcript, final=False, schema=schema)
            transcript.append(AssistantTurn(turn.text, turn.tool_calls))
            if not turn.tool_calls:
                break
            transcript.extend(await self._call_tools(turn.tool_calls, run))
        transcript.append(UserText(FINAL_ANSWER_REQUEST))
        for attempt in range(2):
            turn = await self._complete(run, transcript, final=True, schema=schema)
            try:
                if turn.tool_calls:
                    raise AnswerInvalid("(answer): tool calls are not allowed in the answer")
                answer = parse_answer(turn.text, market.answerable)
            except AnswerInvalid as problem:
                if attempt == 1:
                    raise AgentError(f"malformed answer after one retry: {problem}") from None
                run.stats.answer_retries += 1
                transcript.append(AssistantTurn(turn.text))
                transcript.append(UserText(retry_request(run.nonce, str(problem))))
                continue
            return self._answer(answer, run)
        raise AgentError("no answer")  # pragma: no cover (the loop returns or raises)

    async def _call_tools(self, calls: Sequence[ToolCall], run: _Run) -> list[ToolResult]:
        allowed: list[ToolCall] = []
        refused: dict[str, ToolResult] = {}
        for call in calls:
            if run.stats.tool_calls >= self.config.budget.max_tool_calls:
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
        return [by_id[call.id] for call in calls]

    async def _call_tool(self, call: ToolCall, run: _Run) -> ToolResult:
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
            self._metrics.record_tool(self.name, tool, ok)
        run.stats.tool_errors += 1
        return ToolResult(call.id, call.name, tool_error(run.nonce, message), is_error=True)

    def _crashed(self, tool: str, error: Exception, run: _Run) -> str:
        """A tool raised something other than ToolError: a bug, met on outside data. The
        run goes on (the model hears the tool failed); the log and a metric say so loudly."""
        run.stats.tool_crashes += 1
        self._metrics.record_tool_crash(self.name, tool)
        logger.error(
            "agent.tool_crashed agent=%s tool=%s error=%s",
            self.name,
            tool,
            type(error).__name__,
            exc_info=error,
            extra={
                "event": "agent.tool_crashed",
                "fields": {"agent": self.name, "tool": tool, "error": type(error).__name__},
            },
        )
        return f"the tool failed (internal error: {type(error).__name__}); try something else"

    async def _run_tool(self, call: ToolCall, run: _Run) -> str:
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

    async def _tool_search(self, arguments: dict[str, Any], run: _Run) -> str:
        query = self._string(arguments, "query", 400)
        run.stats.searches += 1
        wanted = self.config.max_results_per_search
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

    async def _page(self, url: str, run: _Run) -> Page:
        try:
            key = normalize_url(url)
        except ValueError as error:
            raise ToolError(f"url: {error}") from None
        page = run.pages.get(key)
        if page is None:
            run.stats.pages_opened += 1
            page = await self._pages.fetch(url)
            for seen in {key, normalize_url(page.url)}:
                run.pages[seen] = page
                run.seen.add(seen)
                if page.title:
                    run.titles[seen] = page.title
        return page

    def _excerpt(self, page: Page, offset: int, run: _Run) -> str:
        end = min(offset + self.config.read_chars, len(page.text))
        more = f"; more with read_text offset {end}" if end < len(page.text) else "; end of text"
        header = (
            f"Page {page.url} | title: {page.title or '(none)'} | published: "
            f"{page.published or 'unknown'} | characters {offset}-{end} of {len(page.text)}{more}"
        )
        return untrusted(run.nonce, "page", f"{header}\n\n{page.text[offset:end]}", url=page.url)

    async def _tool_open(self, arguments: dict[str, Any], run: _Run) -> str:
        page = await self._page(self._string(arguments, "url", 2000), run)
        return self._excerpt(page, 0, run)

    async def _tool_read(self, arguments: dict[str, Any], run: _Run) -> str:
        page = await self._page(self._string(arguments, "url", 2000), run)
        offset = arguments.get("offset", 0)
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise ToolError("offset: a non-negative integer is required")
        if offset >= len(page.text) and page.text:
            raise ToolError(f"offset: the page has only {len(page.text)} characters")
        return self._excerpt(page, offset, run)

    def _answer(self, answer: FinalAnswer, run: _Run) -> AgentResult:
        sources: list[ResearchSource] = []
        used: set[str] = set()
        for cited in answer.sources:
            try:
                key = normalize_url(cited.url)
            except ValueError:
                run.stats.sources_dropped += 1
                continue
            if key not in run.seen:
                run.stats.sources_dropped += 1
                continue
            # Cited and classified by where its text came from: an opened page's URL after
            # redirects (an official URL may redirect to a blog), else the URL as found.
            page = run.pages.get(key)
            url = page.url if page is not None else cited.url
            key = normalize_url(url)
            if key in used:
                continue
            used.add(key)
            classification = self._classifier.classify(url)
            sources.append(
                ResearchSource(
                    url=url,
                    title=(cited.title.strip() or run.titles.get(key, ""))[:500],
                    category=classification.category,
                    credibility_score=classification.credibility,
                    relevance_score=cited.relevance,
                    published_at=cited.published_date,
                )
            )
        reasoning = answer.reasoning.strip()[:MAX_REASONING_CHARS]
        if run.stats.sources_dropped:
            reasoning += (
                f" [oracle: {run.stats.sources_dropped} cited source(s) dropped: "
                "not retrieved by this agent's tools]"
            )
        return self._result(answer.outcome, answer.confidence, reasoning, tuple(sources))

    def _result(
        self, outcome: str, confidence: float, reasoning: str, sources: tuple[ResearchSource, ...]
    ) -> AgentResult:
        return AgentResult(
            agent_id=self.name,
            outcome=outcome,
            confidence=confidence,
            reasoning=reasoning,
            sources=sources,
            provider=self.provider,
            model_family=self.model_family,
        )

    async def aclose(self) -> None:
        try:
            await self._model.aclose()
        finally:
            await self._pages.aclose()
            await super().aclose()


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


def _build_model(config: LlmAgentConfig, where: str) -> ChatModel:
    # The SDKs take a second to import; commands that only read the configuration skip it.
    from oracle.agents.providers.anthropic_messages import AnthropicMessages  # noqa: PLC0415
    from oracle.agents.providers.openai_chat import OpenAIChat  # noqa: PLC0415

    key = config.resolve(where)
    base_url = str(config.base_url) if config.base_url else None
    if key is None and base_url is None:
        raise ConfigError(f"{where}: the {config.api} API needs api_key_env or api_key_file")
    if config.api == "anthropic":
        return AnthropicMessages(
            model=config.model,
            provider=config.provider_name,
            api_key=key,
            base_url=base_url,
            temperature=config.temperature,
            timeout_seconds=config.request_timeout_seconds,
            max_retries=config.max_retries,
        )
    return OpenAIChat(
        model=config.model,
        provider=config.provider_name,
        api_key=key,
        base_url=base_url,
        temperature=config.temperature,
        timeout_seconds=config.request_timeout_seconds,
        max_retries=config.max_retries,
        output_token_field=config.output_token_field,
    )
