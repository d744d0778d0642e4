"""The research-agent interface. The daemon knows agents only through it.

Contract of :class:`ResearchAgent`:

- `name` is unique among configured agents and is the `agent_id` of every answer.
- `research(market)` returns one :class:`~oracle.core.models.AgentResult` for the market,
  or raises :class:`AgentError` with a reason a person can read. Any other exception is
  treated the same way by the caller; it must never take the daemon down.
- `revise(market, own, shown, round_)`, in a debate (`consensus.conflict_resolution:
  debate`), answers again after examining the answers `shown` that disagree with its
  standing answer `own`; same errors as `research`. Returning `own` keeps its answer.
- The caller enforces `consensus.agent_timeout` (and a debate's `round_timeout`) by
  cancelling `research` (`revise`); an agent must leave nothing behind when cancelled.
- Agents are isolated: each owns its HTTP session, caches and state, and shares none of
  them with another agent (independent errors are the point of asking several).
- `aclose()` releases what the agent holds; it is called once at shutdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import aiohttp

from oracle.core.models import AgentResult, Market, ResearchSource


@runtime_checkable
class ResearchAgent(Protocol):
    name: str
    kind: str
    provider: str | None
    model_family: str | None

    async def research(self, market: Market) -> AgentResult: ...

    async def revise(
        self, market: Market, own: AgentResult, shown: Sequence[AgentResult], round_: int
    ) -> AgentResult:
        """Round `round_` (from 1) of a debate: examine the answers `shown` (which disagree
        with `own`, this agent's standing answer; untrusted data), research again as
        needed, and answer again in the same form. Returning `own` keeps it."""
        ...

    async def aclose(self) -> None: ...


def agent_result(
    agent: ResearchAgent,
    outcome: str,
    confidence: float,
    reasoning: str,
    sources: tuple[ResearchSource, ...],
) -> AgentResult:
    """An answer of `agent`, under its name, provider and model family."""
    return AgentResult(
        agent_id=agent.name,
        outcome=outcome,
        confidence=confidence,
        reasoning=reasoning,
        sources=sources,
        provider=agent.provider,
        model_family=agent.model_family,
    )


class PrivateSession:
    """One agent's own HTTP session, cookie jar and connection pool, shared with no other
    agent (independent errors are the point of asking several). Calling it gives the
    session, opened on first use (inside the event loop); `aclose` closes it."""

    def __init__(self, user_agent: str = "oracle-research-agent/0.1") -> None:
        self._user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None

    def __call__(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=8, force_close=False),
                cookie_jar=aiohttp.CookieJar(),
                headers={"User-Agent": self._user_agent},
            )
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
