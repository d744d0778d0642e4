"""The `replay` agent kind: answers from recorded agent results on disk.

A recording is a consensus input document (`{"market": ..., "results": [...],
"failures": [...]}`, the format `oracle consensus` reads), one per file, in `directory`.
A market is matched by its id, else by its question text (case and spacing ignored).
The agent answers with the recorded result whose `agent_id` is its `replay_as` (default:
its own name); a recorded failure for that agent is replayed as a failure. A recorded
INVALID is replayed whether or not the recording's market says its venue takes it; the
daemon refuses it where the live market's venue does not. Used for the demo, for tests,
and for backtests.

Debates are replayed from `directory/debate/round-<n>/`, recordings of the same format
holding each agent's answer in round n; an agent with no answer recorded for a round
keeps its standing answer.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from oracle.core.inputs import parse_consensus_input
from oracle.core.models import AgentResult, ConsensusInput, Market
from oracle.errors import AgentError, InputError, JsonError
from oracle.safe_json import loads


def question_key(question: str) -> str:
    return " ".join(question.lower().split())


def _taking_invalid(document: object) -> object:
    """A recording whose market does not say whether its venue takes INVALID is read as
    one that does: its market is only matched, never judged, so a recorded INVALID (a
    canceled game) is replayed, and the daemon checks it against the live market
    (`Market.answerable`: refused there where the venue takes no INVALID)."""
    if not isinstance(document, dict):
        return document
    market = document.get("market")
    if not isinstance(market, dict) or "invalid" in market:
        return document
    return {**document, "market": {**market, "invalid": "review"}}


@dataclass
class _Recordings:
    by_id: dict[str, ConsensusInput] = field(default_factory=dict)
    by_question: dict[str, ConsensusInput] = field(default_factory=dict)

    def find(self, market: Market) -> ConsensusInput | None:
        return self.by_id.get(market.id) or self.by_question.get(question_key(market.question))


class ReplayAgent:
    kind = "replay"

    def __init__(
        self,
        name: str,
        directory: Path,
        *,
        replay_as: str | None = None,
        latency_seconds: float = 0.0,
        latency_jitter_seconds: float = 0.0,
        provider: str | None = None,
        model_family: str | None = None,
    ) -> None:
        self.name = name
        self.provider = provider
        self.model_family = model_family
        self._replay_as = replay_as or name
        self._latency = latency_seconds
        self._jitter = latency_jitter_seconds
        self._random = random.Random(name)
        if not directory.is_dir():
            raise AgentError(f"replay agent {self.name}: {directory} is not a directory")
        self._recordings = self._load(directory)
        self._rounds = {
            int(path.name.removeprefix("round-")): self._load(path, f"debate/{path.name}/")
            for path in sorted((directory / "debate").glob("round-*"))
            if path.is_dir() and path.name.removeprefix("round-").isdigit()
        }

    def _load(self, directory: Path, shown_as: str = "") -> _Recordings:
        recordings = _Recordings()
        for path in sorted(directory.glob("*.json")):
            try:
                recording = parse_consensus_input(_taking_invalid(loads(path.read_bytes())))
            except (InputError, JsonError, OSError) as error:
                where = shown_as + path.name
                raise AgentError(f"replay agent {self.name}: {where}: {error}") from None
            recordings.by_id[recording.market.id] = recording
            recordings.by_question[question_key(recording.market.question)] = recording
        return recordings

    async def _take_time(self) -> None:
        if self._latency or self._jitter:
            await asyncio.sleep(self._latency + self._random.uniform(0, self._jitter))

    async def research(self, market: Market) -> AgentResult:
        await self._take_time()
        recording = self._recordings.find(market)
        if recording is None:
            raise AgentError(f"no recording for market {market.id!r}")
        return self._replayed(market, recording)

    async def revise(
        self, market: Market, own: AgentResult, shown: Sequence[AgentResult], round_: int
    ) -> AgentResult:
        await self._take_time()  # a recorded agent takes as long to answer again
        recordings = self._rounds.get(round_)
        recording = recordings.find(market) if recordings is not None else None
        answered = {r.agent_id for r in recording.results} if recording is not None else set()
        failed = {f.agent_id for f in recording.failures} if recording is not None else set()
        if recording is None or self._replay_as not in answered | failed:
            return own
        return self._replayed(market, recording)

    def _replayed(self, market: Market, recording: ConsensusInput) -> AgentResult:
        for failure in recording.failures:
            if failure.agent_id == self._replay_as:
                raise AgentError(failure.error)
        for result in recording.results:
            if result.agent_id == self._replay_as:
                return result.model_copy(
                    update={
                        "agent_id": self.name,
                        "provider": self.provider or result.provider,
                        "model_family": self.model_family or result.model_family,
                    }
                )
        raise AgentError(f"the recording for {market.id!r} has no answer from {self._replay_as}")

    async def aclose(self) -> None:
        return None
