"""Fan a market out to every agent, each isolated, time-limited and behind its breaker.

Whatever an agent does (answers, raises, hangs, answers another market's outcome), the
fan-out returns one answer per agent: a result, or a failure that says why. It never
raises because of an agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from oracle.agents.base import ResearchAgent
from oracle.core.models import AgentFailure, AgentResult, Market, ResearchSource
from oracle.daemon.circuit import CircuitBreaker
from oracle.errors import AgentError
from oracle.scrub import SCRUBBER, scrub

Clock = Callable[[], float]


@dataclass(frozen=True)
class Answer:
    agent_id: str
    answer: AgentResult | AgentFailure
    latency_seconds: float


@dataclass
class AgentPool:
    """The configured agents and one circuit breaker each."""

    agents: Sequence[ResearchAgent]
    timeout_seconds: float
    breakers: dict[str, CircuitBreaker]
    clock: Clock = time.monotonic

    @classmethod
    def of(
        cls,
        agents: Sequence[ResearchAgent],
        timeout_seconds: float,
        cooldown_seconds: float = 60.0,
        clock: Clock = time.monotonic,
    ) -> AgentPool:
        names = [a.name for a in agents]
        if len(set(names)) != len(names):
            raise ValueError(f"agent names must be unique: {names}")
        breakers = {n: CircuitBreaker(cooldown_seconds=cooldown_seconds) for n in names}
        return cls(agents, timeout_seconds, breakers, clock)

    async def research(self, market: Market) -> list[Answer]:
        return list(
            await asyncio.gather(
                *(
                    self._ask(agent, market, partial(agent.research, market))
                    for agent in self.agents
                )
            )
        )

    async def revise(
        self,
        market: Market,
        standing: Mapping[str, AgentResult],
        shown: Mapping[str, Sequence[AgentResult]],
        round_: int,
        timeout_seconds: float,
    ) -> list[Answer]:
        """A debate round: every agent named in `shown` answers again (`revise`) after
        examining those answers, isolated and behind its breaker as in `research`."""
        asked = [agent for agent in self.agents if agent.name in shown]
        return list(
            await asyncio.gather(
                *(
                    self._ask(
                        agent,
                        market,
                        partial(
                            agent.revise, market, standing[agent.name], shown[agent.name], round_
                        ),
                        timeout_seconds,
                    )
                    for agent in asked
                )
            )
        )

    async def _ask(
        self,
        agent: ResearchAgent,
        market: Market,
        call: Callable[[], Awaitable[AgentResult]],
        timeout_seconds: float | None = None,
    ) -> Answer:
        timeout = self.timeout_seconds if timeout_seconds is None else timeout_seconds
        breaker = self.breakers[agent.name]
        start = self.clock()
        if not breaker.allows(start):
            return Answer(agent.name, _failure(agent, "circuit open after repeated failures"), 0.0)
        try:
            result = await asyncio.wait_for(call(), timeout)
            problem = _check(agent, market, result)
        except TimeoutError:
            problem = f"timed out after {timeout:g} s"
        except AgentError as error:
            problem = str(error) or type(error).__name__
        except Exception as error:  # an agent bug must not stop the daemon
            problem = f"{type(error).__name__}: {error}"
        latency = self.clock() - start
        if problem is None:
            breaker.record_success(self.clock())
            return Answer(agent.name, scrubbed(result), latency)
        breaker.record_failure(self.clock())
        return Answer(agent.name, _failure(agent, problem), latency)

    async def aclose(self) -> None:
        for agent in self.agents:
            try:
                await agent.aclose()
            except Exception:  # closing one agent must not keep the others open
                continue


def _failure(agent: ResearchAgent, error: str) -> AgentFailure:
    return AgentFailure(agent_id=agent.name, error=scrub(error)[:2000])


def scrubbed(result: AgentResult) -> AgentResult:
    """`result` without any configured secret in its words (`oracle.scrub`): whatever an
    agent brings back (a page quoting a key, a model echoing one) is stored, shown to the
    other agents in a debate and proved only scrubbed."""
    if not SCRUBBER.active:
        return result
    sources = tuple(_scrubbed_source(source) for source in result.sources)
    reasoning = scrub(result.reasoning)
    if reasoning == result.reasoning and all(
        new is old for new, old in zip(sources, result.sources, strict=True)
    ):
        return result  # nothing held a secret: no copy
    return result.model_copy(update={"reasoning": reasoning, "sources": sources})


def _scrubbed_source(source: ResearchSource) -> ResearchSource:
    url, title, quote = scrub(source.url), scrub(source.title), scrub(source.quote)
    if (url, title, quote) == (source.url, source.title, source.quote):
        return source
    return source.model_copy(update={"url": url, "title": title, "quote": quote})


def _check(agent: ResearchAgent, market: Market, result: object) -> str | None:
    if not isinstance(result, AgentResult):
        return f"returned {type(result).__name__}, not an AgentResult"
    if result.agent_id != agent.name:
        return f"answered as {result.agent_id!r}, not as itself"
    if not market.admits(result.outcome):
        expected = f"one of {', '.join(market.answerable)}"
        if market.values is not None:
            expected += f", or a {market.values.kind} in its canonical spelling"
        return f"answered unknown outcome {result.outcome!r}; expected {expected}"
    return None
