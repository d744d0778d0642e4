"""The fan-out: one answer per agent whatever the agent does."""

from __future__ import annotations

import asyncio

from oracle.core.models import AgentResult, Market
from oracle.daemon.research import AgentPool
from oracle.errors import AgentError
from oracle.testing import result

MARKET = Market(id="m", question="q?")


class Scripted:
    kind = "scripted"
    provider = None
    model_family = None

    def __init__(self, name: str, behaviour: str) -> None:
        self.name = name
        self.behaviour = behaviour
        self.calls = 0
        self.closed = False

    async def research(self, market: Market) -> AgentResult:
        self.calls += 1
        match self.behaviour:
            case "ok":
                return result(self.name, "YES", 0.8, 3)
            case "hang":
                await asyncio.sleep(60)
            case "agent-error":
                raise AgentError("quota exhausted")
            case "bug":
                raise KeyError("boom")
            case "impostor":
                return result("someone-else", "YES", 0.8, 3)
            case "bad-outcome":
                return result(self.name, "MAYBE", 0.8, 3)
        raise AssertionError(self.behaviour)

    async def aclose(self) -> None:
        self.closed = True


def test_every_agent_gets_exactly_one_answer() -> None:
    agents = [
        Scripted(n, n) for n in ("ok", "hang", "agent-error", "bug", "impostor", "bad-outcome")
    ]
    pool = AgentPool.of(agents, timeout_seconds=0.2)
    answers = {a.agent_id: a.answer for a in asyncio.run(pool.research(MARKET))}
    assert isinstance(answers.pop("ok"), AgentResult)
    errors = {agent_id: failure.error for agent_id, failure in answers.items()}  # type: ignore[union-attr]
    assert errors == {
        "hang": "timed out after 0.2 s",
        "agent-error": "quota exhausted",
        "bug": "KeyError: 'boom'",
        "impostor": "answered as 'someone-else', not as itself",
        "bad-outcome": "answered unknown outcome 'MAYBE'; expected one of YES, NO, UNDETERMINED",
    }


def test_breaker_opens_after_three_failures_and_skips_the_agent() -> None:
    now = [0.0]
    broken = Scripted("broken", "agent-error")
    pool = AgentPool.of([broken], timeout_seconds=1, cooldown_seconds=60, clock=lambda: now[0])
    for _ in range(3):
        asyncio.run(pool.research(MARKET))
    [answer] = asyncio.run(pool.research(MARKET))
    assert answer.answer.error == "circuit open after repeated failures"  # type: ignore[union-attr]
    assert broken.calls == 3
    now[0] = 61.0  # cooldown over: one trial call goes through
    asyncio.run(pool.research(MARKET))
    assert broken.calls == 4


def test_close_closes_every_agent() -> None:
    agents = [Scripted("a", "ok"), Scripted("b", "ok")]
    asyncio.run(AgentPool.of(agents, 1).aclose())
    assert all(a.closed for a in agents)
