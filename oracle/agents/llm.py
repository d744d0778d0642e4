"""The `llm` agent kind: a language model researches with tools, then answers in a schema.

One run: (1) a market no answer to which can be final yet gets UNDETERMINED, "not yet"
(or "too early"), without asking the model: before its answer window opens, or before it
closes when no outcome can be known early (`too_early_reason`); (2) the research loop, in
which the model calls `search`, `open_page` and `read_text` until it stops or a budget
(tool calls, tokens, wall time less `answer_reserve_seconds`) runs out; (3) the final
answer, requested as structured output against a schema built from the market's
outcomes, validated, and retried once with the validation error; a second failure is an
agent failure.

The present is the venue's clock when this research began (`market.now`), the agent's
own clock only when the market does not say; the prompt gives it, and the window.

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
from dataclasses import asdict, dataclass, replace
from typing import Any

from oracle.agents.answer import FinalAnswer, answer_schema, parse_answer
from oracle.agents.base import PrivateSession, agent_result
from oracle.agents.metrics import AgentMetrics, RunStats
from oracle.agents.prompts import (
    FINAL_ANSWER_REQUEST,
    debate_prompt,
    new_nonce,
    question_prompt,
    retry_request,
    system_prompt,
)
from oracle.agents.providers.base import (
    AssistantTurn,
    ChatModel,
    Entry,
    ModelTurn,
    UserText,
    entry_texts,
    estimate_tokens,
)
from oracle.agents.question import parse_question, present, too_early_reason
from oracle.agents.settings import LlmAgentConfig
from oracle.agents.tools import TOOLS, ResearchRun, ResearchTools
from oracle.core.models import UNDETERMINED, AgentResult, Market
from oracle.errors import AgentError, AnswerInvalid, ModelError
from oracle.log import emit
from oracle.scrub import scrub

logger = logging.getLogger(__name__)

MAX_REASONING_CHARS = 10_000


@dataclass(frozen=True)
class _Debate:
    """What a debate round shows the agent: its standing answer and those that disagree."""

    own: AgentResult
    shown: tuple[AgentResult, ...]
    round: int


class LlmAgent:
    """A language model researching with its tools (built by `oracle.app.build_agent`)."""

    kind = "llm"

    def __init__(
        self,
        config: LlmAgentConfig,
        *,
        model: ChatModel,
        tools: ResearchTools,
        session: PrivateSession,
        metrics: AgentMetrics,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = config.name
        self.config = config
        self.provider: str | None = config.provider_name
        self.model_family: str | None = config.family
        self._model = model
        self._tools = tools
        self._session = session
        self._clock = clock
        self._metrics = metrics
        self.last_run: RunStats | None = None
        self.on_run: list[Callable[[RunStats], None]] = []

    def __repr__(self) -> str:
        return f"LlmAgent(name={self.name!r}, model={self.config.model!r})"

    async def research(self, market: Market) -> AgentResult:
        return await self._research_run(market, None)

    async def revise(
        self, market: Market, own: AgentResult, shown: Sequence[AgentResult], round_: int
    ) -> AgentResult:
        return await self._research_run(market, _Debate(own, tuple(shown), round_))

    async def _research_run(self, market: Market, debate: _Debate | None) -> AgentResult:
        stats = RunStats(
            agent=self.name,
            market_id=market.id,
            model=self.config.model,
            provider=self.config.provider_name,
        )
        started = time.monotonic()
        try:
            now = present(market, self._clock())
            if (reason := too_early_reason(market, now)) is not None:
                stats.result = "too_early"
                return agent_result(self, UNDETERMINED, 1.0, reason, ())
            budget = self.config.budget
            run = ResearchRun(stats, started + budget.wall_seconds, new_nonce())
            if debate is not None:
                # Its own earlier sources were returned by its tools (in the run that found
                # them): it may cite them again. Those of the answers shown it must fetch.
                for source in debate.own.sources:
                    run.seen.add(source.normalized_url)
                    run.titles.setdefault(source.normalized_url, source.title)
                    run.held.setdefault(source.normalized_url, source)
            try:
                async with asyncio.timeout(budget.wall_seconds):
                    result = await self._run(market, now, run, debate)
            except TimeoutError:
                raise AgentError(
                    f"wall-time budget of {budget.wall_seconds:g} s exhausted"
                ) from None
            except ModelError as error:
                raise AgentError(scrub(str(error))) from None
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
        self, run: ResearchRun, transcript: Sequence[Entry], *, final: bool, schema: dict[str, Any]
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
        # A configured secret the model writes (it read one somewhere) goes no further: not
        # into a search query, a page request or the transcript (oracle.scrub).
        turn = replace(
            turn,
            text=scrub(turn.text),
            tool_calls=tuple(replace(c, arguments=scrub(c.arguments)) for c in turn.tool_calls),
        )
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

    def _research_over(self, run: ResearchRun) -> bool:
        budget = self.config.budget
        return (
            run.stats.tool_calls >= budget.max_tool_calls
            or run.stats.total_tokens >= budget.max_tokens
            or time.monotonic() >= run.deadline - budget.answer_reserve_seconds
        )

    async def _run(
        self, market: Market, now: float, run: ResearchRun, debate: _Debate | None = None
    ) -> AgentResult:
        question = parse_question(market.question, market.criteria)
        schema = answer_schema(market.answerable, market.values)
        transcript: list[Entry] = [UserText(question_prompt(market, question, now, run.nonce))]
        if debate is not None:
            transcript.append(
                UserText(debate_prompt(debate.own, debate.shown, debate.round, run.nonce))
            )
        while not self._research_over(run):
            turn = await self._complete(run, transcript, final=False, schema=schema)
            transcript.append(AssistantTurn(turn.text, turn.tool_calls))
            if not turn.tool_calls:
                break
            transcript.extend(await self._tools.call(turn.tool_calls, run))
        transcript.append(UserText(FINAL_ANSWER_REQUEST))
        for attempt in range(2):
            turn = await self._complete(run, transcript, final=True, schema=schema)
            try:
                if turn.tool_calls:
                    raise AnswerInvalid("(answer): tool calls are not allowed in the answer")
                answer = parse_answer(turn.text, market.answerable, market.values, market.outcomes)
            except AnswerInvalid as problem:
                if attempt == 1:
                    raise AgentError(f"malformed answer after one retry: {problem}") from None
                run.stats.answer_retries += 1
                transcript.append(AssistantTurn(turn.text))
                transcript.append(UserText(retry_request(run.nonce, str(problem))))
                continue
            return self._answer(answer, run)
        raise AgentError("no answer")  # pragma: no cover (the loop returns or raises)

    def _answer(self, answer: FinalAnswer, run: ResearchRun) -> AgentResult:
        sources = self._tools.cited_sources(answer, run)
        reasoning = scrub(answer.reasoning.strip())[:MAX_REASONING_CHARS]
        if run.stats.sources_dropped:
            reasoning += (
                f" [oracle: {run.stats.sources_dropped} cited source(s) dropped: "
                "not retrieved by this agent's tools, or its page failed to load]"
            )
        if run.stats.sources_unread:
            reasoning += (
                f" [oracle: {run.stats.sources_unread} cited source(s) seen, not read: "
                "not opened, or the quote is not in the text read; counted for nothing]"
            )
        return agent_result(self, answer.outcome, answer.confidence, reasoning, sources)

    async def aclose(self) -> None:
        try:
            await self._model.aclose()
        finally:
            await self._tools.aclose()
            await self._session.aclose()
