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
import hashlib
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


@dataclass(frozen=True)
class _Failed:
    error: str


# What one recording holds for one agent: its answer, its failure, or nothing (it did not
# answer in that recording). Only that is kept: a daemon replaying N agents over many
# recordings would otherwise hold every recording N times.
_Entry = AgentResult | _Failed | None


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
    by_id: dict[str, _Entry] = field(default_factory=dict)
    by_question: dict[str, _Entry] = field(default_factory=dict)

    def find(self, market: Market) -> tuple[bool, _Entry]:
        """Whether a recording matches `market`, and this agent's entry in it."""
        for table, key in (
            (self.by_id, market.id),
            (self.by_question, question_key(market.question)),
        ):
            if key in table:
                return True, table[key]
        return False, None


@dataclass(frozen=True)
class _Recording:
    market_id: str
    question: str  # its `question_key`
    # Each agent's entry: its failure where one is recorded, else its first result.
    answers: dict[str, _Entry]

    @classmethod
    def of(cls, recording: ConsensusInput) -> _Recording:
        answers: dict[str, _Entry] = {}
        for result in recording.results:
            answers.setdefault(result.agent_id, result)
        failures: dict[str, _Entry] = {}
        for failure in recording.failures:
            failures.setdefault(failure.agent_id, _Failed(failure.error))
        return cls(recording.market.id, question_key(recording.market.question), answers | failures)


class _Unreadable(Exception):
    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name, reason)
        self.name, self.reason = name, reason


# Each recording read, by the digest of its file's bytes: the replay agents of one daemon
# share a directory (five agents over 1,000 recordings would parse 5,000 files at start),
# and each keeps references to its own entries only, so a recording is parsed and held
# once however many agents replay it; a file that changed is a new digest.
_PARSED: dict[bytes, _Recording] = {}


def _read_directory(directory: Path) -> list[_Recording]:
    """The recordings in `directory`; `_Unreadable` naming the first that cannot be read."""
    recordings = []
    for path in sorted(directory.glob("*.json")):
        try:
            data = path.read_bytes()
            digest = hashlib.blake2b(data, digest_size=20).digest()
            recording = _PARSED.get(digest)
            if recording is None:
                recording = _Recording.of(parse_consensus_input(_taking_invalid(loads(data))))
                _PARSED[digest] = recording
        except (InputError, JsonError, OSError) as error:
            raise _Unreadable(path.name, str(error)) from None
        recordings.append(recording)
    return recordings


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
        try:
            parsed = _read_directory(directory)
        except _Unreadable as error:
            where = shown_as + error.name
            raise AgentError(f"replay agent {self.name}: {where}: {error.reason}") from None
        recordings = _Recordings()
        for recording in parsed:
            entry = recording.answers.get(self._replay_as)
            recordings.by_id[recording.market_id] = entry
            recordings.by_question[recording.question] = entry
        return recordings

    async def _take_time(self) -> None:
        if self._latency or self._jitter:
            await asyncio.sleep(self._latency + self._random.uniform(0, self._jitter))

    async def research(self, market: Market) -> AgentResult:
        await self._take_time()
        found, entry = self._recordings.find(market)
        if not found:
            raise AgentError(f"no recording for market {market.id!r}")
        if entry is None:
            raise AgentError(
                f"the recording for {market.id!r} has no answer from {self._replay_as}"
            )
        return self._replayed(entry)

    async def revise(
        self, market: Market, own: AgentResult, shown: Sequence[AgentResult], round_: int
    ) -> AgentResult:
        await self._take_time()  # a recorded agent takes as long to answer again
        recordings = self._rounds.get(round_)
        entry = recordings.find(market)[1] if recordings is not None else None
        return own if entry is None else self._replayed(entry)

    def _replayed(self, entry: AgentResult | _Failed) -> AgentResult:
        if isinstance(entry, _Failed):
            raise AgentError(entry.error)
        return entry.model_copy(
            update={
                "agent_id": self.name,
                "provider": self.provider or entry.provider,
                "model_family": self.model_family or entry.model_family,
            }
        )

    async def aclose(self) -> None:
        return None
