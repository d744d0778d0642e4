"""The conflict resolution modes compared on recordings with known outcomes, for
`oracle backtest` (the figures: `oracle.backtest.mode_figures`).

`escalate` and `majority` judge each recording as the daemon does (`evaluate`);
`majority` adds the weighted plurality it would propose to the reviewer of a conflict.
`debate` runs, for each critique topology, the daemon's own debate (`run_debate`: the same
challenges, revisions behind the agent pool, flips, stop rules and final `evaluate`) with
one `replay` agent per recorded agent, replaying the rounds recorded under
`DIR/debate/round-<n>/` (docs/backtest.md). A recording without rounds debates too: its
agents keep their answers, and the debate stalls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from oracle.agents.replay import ReplayAgent
from oracle.backtest import ConflictRun, ModeFigures, Recording, mode_figures
from oracle.core.consensus import evaluate
from oracle.core.debate import ConflictResolution, Topology, is_conflict, weighted_plurality
from oracle.core.models import ConsensusResult
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.daemon.debate import run_debate
from oracle.daemon.research import AgentPool


def _conflict(result: ConsensusResult) -> bool:
    return is_conflict([vote.outcome for vote in result.votes if vote.counted], result.reached)


def _run(result: ConsensusResult, conflict: bool, proposed: str | None = None) -> ConflictRun:
    return ConflictRun(result.action, result.outcome, conflict, proposed=proposed)


async def _debated(
    recordings: Sequence[Recording],
    firsts: Sequence[ConsensusResult],
    agents: Sequence[ReplayAgent],
    params: ConsensusParams,
    thresholds: SourceThresholds,
) -> list[ConflictRun]:
    runs = []
    for recording, first in zip(recordings, firsts, strict=True):
        if not _conflict(first):
            runs.append(_run(first, False))
            continue
        # Fresh breakers for each market: a replayed failure must not silence an agent
        # in the next recording.
        pool = AgentPool.of(agents, params.agent_timeout)
        outcome = await run_debate(pool, recording.consensus_input, first, params, thresholds)
        runs.append(ConflictRun(outcome.result.action, outcome.result.outcome, True, outcome.flips))
    return runs


def compare_conflict_modes(
    recordings: Sequence[Recording],
    directory: Path,
    params: ConsensusParams,
    thresholds: SourceThresholds,
) -> tuple[ModeFigures, ...]:
    """`escalate`, `majority`, then `debate` under each topology (in the order of
    `Topology`), with `params` otherwise as configured."""
    firsts = [evaluate(r.consensus_input, params, thresholds) for r in recordings]
    conflicts = [_conflict(first) for first in firsts]
    escalate = [_run(first, conflict) for first, conflict in zip(firsts, conflicts, strict=True)]
    majority = [
        _run(first, conflict, weighted_plurality(first.votes).outcome if conflict else None)
        for first, conflict in zip(firsts, conflicts, strict=True)
    ]
    figures = [
        mode_figures(ConflictResolution.ESCALATE.value, None, recordings, escalate),
        mode_figures(ConflictResolution.MAJORITY.value, None, recordings, majority),
    ]
    names = sorted(
        {r.agent_id for recording in recordings for r in recording.consensus_input.results}
    )
    agents = [ReplayAgent(name, directory) for name in names]
    for topology in Topology:
        debating = params.model_copy(
            update={
                "conflict_resolution": ConflictResolution.DEBATE,
                "debate": params.debate.model_copy(update={"topology": topology}),
            }
        )
        runs = asyncio.run(_debated(recordings, firsts, agents, debating, thresholds))
        figures.append(
            mode_figures(ConflictResolution.DEBATE.value, topology.value, recordings, runs)
        )
    return tuple(figures)
