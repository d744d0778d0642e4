"""Debate on conflict, the pure part: who examines whose answer in a round, when a debate
stops, which changes of mind count, and how strong the agreement is at the end.

The design documents (`../shared/seeds/`: the consensus-strategies and debate-phases
documents) describe critique and revision rounds between agents that disagree, with a
stop when one proposal's posterior reaches 0.8 or after `max_rounds` (3). Published
results warn that debate can make a group of models worse than their independent vote,
because agents herd. So the rules here are conservative:

* **Independent first.** A debate starts only from a conflict in the independent
  research: at least two definite outcomes among the counted votes and no quorum
  (`is_conflict`).
* **Who sees what** (`challenges`): in each round an agent examines the answers of the
  agents its topology pairs it with *that hold another outcome* (agreeing answers teach
  nothing); topologies from the debate-phases document: all-to-all, round-robin
  (a rotation by name hash), ring, star (the hub is the first agent by name), sparse (a
  seeded, reproducible subset). An agent with nobody to examine sits the round out.
* **Evidence, not persuasion** (`flips`, `next_standing`): a change of outcome counts
  only when the agent brings new evidence (`oracle.core.evidence.is_new_evidence`): a
  source read in that round, whose quote is found in the page and is about the question
  (shares a content word with the question or its outcome labels), from a document
  (`document_key`: no query, fragment, `www.`, trailing slash or path case) that neither
  its own answers nor the answers it was shown had before. A flip without new evidence
  is marked and the agent's standing answer stays where its evidence was. An answer that
  keeps its outcome keeps the earlier sources it does not cite again.
* **When to stop** (`stop_reason`): the leading outcome's Bayesian posterior reaches
  `stop_posterior` (converged), nobody changed their mind in a round (stalled), or
  `max_rounds` were run (exhausted).
* The debate's final answers then go through the same thresholds, quorum, overlap and
  diversity gates and the same decision policy as any other: nothing here decides what
  goes on-chain.

The `majority` mode of the consensus-strategies document ("on conflict, the weighted
plurality wins") is `weighted_plurality`: it names the outcome with the most counted vote
weight as the *proposed* answer of a conflict, for the person who reviews it. It changes
no verdict: a conflict is a verdict without a quorum, which the decision policy always
sends to review (`no_consensus`), so `majority` can never put on-chain what `escalate`
would not; it is a review label, measured as such by `oracle backtest`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from oracle.core.evidence import documents, is_new_evidence
from oracle.core.models import UNDETERMINED, AgentResult, Vote
from oracle.core.strategies import Ballot, bayesian_posterior


class ConflictResolution(StrEnum):
    ESCALATE = "escalate"  # a person decides (the behaviour without debate)
    MAJORITY = "majority"  # a person decides, shown the weighted plurality as proposed
    DEBATE = "debate"


class Topology(StrEnum):
    ALL_TO_ALL = "all-to-all"
    ROUND_ROBIN = "round-robin"
    RING = "ring"
    STAR = "star"
    SPARSE = "sparse"


class DebateParams(BaseModel):
    """How a debate runs (`consensus.debate.*`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_rounds: int = Field(3, ge=1, le=10, description="Critique and revision rounds at most.")
    stop_posterior: float = Field(
        0.8, gt=0.5, le=1.0, description="Stop once the leader's posterior reaches this."
    )
    topology: Topology = Topology.ALL_TO_ALL
    sparsity: float = Field(
        0.5, ge=0.0, lt=1.0, description="sparse topology: share of pairs left out."
    )
    round_timeout: float = Field(300.0, gt=0, description="Seconds one round may take.")


@dataclass(frozen=True)
class Challenge:
    """`critic` examines `target`'s answer this round."""

    critic: str
    target: str


class StopReason(StrEnum):
    CONVERGED = "converged"
    STALLED = "stalled"
    EXHAUSTED = "exhausted"


class ConsensusStrength(StrEnum):
    """How broad the agreement is (the debate-phases document's levels)."""

    UNANIMOUS = "unanimous"  # every counted vote
    STRONG = "strong"  # more than 80 %
    MODERATE = "moderate"  # 60 to 80 %
    WEAK = "weak"  # more than 50 %, under 60 %
    CONTESTED = "contested"  # no majority, the top two a vote apart or tied
    SPLIT = "split"  # no majority otherwise


@dataclass(frozen=True)
class Flip:
    """An agent that changed its outcome between two rounds."""

    agent_id: str
    before: str
    after: str
    new_sources: tuple[str, ...]  # normalized URLs of its new evidence (is_new_evidence)

    @property
    def supported(self) -> bool:
        return bool(self.new_sources)


def is_conflict(outcomes: Sequence[str], reached: bool) -> bool:
    """Whether independent answers conflict: no quorum `reached` and at least two
    definite (not UNDETERMINED) outcomes among them."""
    definite = {outcome for outcome in outcomes if outcome != UNDETERMINED}
    return not reached and len(definite) >= 2


@dataclass(frozen=True)
class MajorityProposal:
    """The weighted plurality of a conflict: `outcome` None when the top two tie."""

    outcome: str | None
    weights: dict[str, float]  # counted vote weight per definite outcome, rounded
    share: float  # the proposed outcome's share of that weight (0 on a tie)


def weighted_plurality(votes: Sequence[Vote]) -> MajorityProposal:
    """The definite outcome with the most vote weight among the counted `votes` (a
    verdict's, so reputation and evidence already weigh them). UNDETERMINED proposes
    nothing; a tie at the top proposes nothing either (a person sees the split)."""
    totals: dict[str, float] = {}
    for vote in votes:
        if vote.counted and vote.outcome != UNDETERMINED:
            totals[vote.outcome] = totals.get(vote.outcome, 0.0) + vote.weight
    ranked = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    weights = {outcome: round(weight, 6) for outcome, weight in sorted(totals.items())}
    if not ranked or (len(ranked) > 1 and abs(ranked[0][1] - ranked[1][1]) <= 1e-9):
        return MajorityProposal(None, weights, 0.0)
    total = sum(totals.values())
    return MajorityProposal(ranked[0][0], weights, round(ranked[0][1] / total, 6))


def majority_record(proposal: MajorityProposal) -> dict[str, object]:
    """The proof's `majority` section: what was proposed to the reviewer, and why."""
    return {"proposed": proposal.outcome, "weights": proposal.weights, "share": proposal.share}


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def _pairs(agents: Sequence[str], params: DebateParams, round_: int, seed: str) -> list[Challenge]:
    names = sorted(agents)
    count = len(names)
    if count < 2:
        return []
    topology = params.topology
    if topology == Topology.ALL_TO_ALL:
        return [Challenge(a, b) for a in names for b in names if a != b]
    if topology == Topology.RING:
        return [Challenge(names[i], names[(i + 1) % count]) for i in range(count)]
    if topology == Topology.STAR:
        hub = names[0]
        return [p for other in names[1:] for p in (Challenge(hub, other), Challenge(other, hub))]
    if topology == Topology.ROUND_ROBIN:
        order = sorted(names, key=lambda name: (_digest(name), name))
        step = 1 + (round_ - 1) % (count - 1)  # a different partner each round
        return [Challenge(order[i], order[(i + step) % count]) for i in range(count)]
    kept = [
        Challenge(a, b)
        for a in names
        for b in names
        if a != b and _digest(seed, str(round_), a, b) / 2**64 >= params.sparsity
    ]
    return kept


def challenges(
    positions: Mapping[str, str], params: DebateParams, round_: int, seed: str
) -> list[Challenge]:
    """Who examines whose answer in round `round_` (from 1): the topology's pairs among
    the agents in `positions` (agent -> its outcome now) whose outcomes differ. `seed`
    (the market id) makes the sparse topology reproducible. Sorted by (critic, target)."""
    if round_ < 1:
        raise ValueError("round: counted from 1")
    pairs = _pairs(list(positions), params, round_, seed)
    opposed = {p for p in pairs if positions[p.critic] != positions[p.target]}
    return sorted(opposed, key=lambda c: (c.critic, c.target))


def _urls(result: AgentResult) -> set[str]:
    return {source.normalized_url for source in result.sources}


def flips(
    before: Mapping[str, AgentResult],
    after: Mapping[str, AgentResult],
    shown: Mapping[str, Sequence[AgentResult]],
    *,
    subject: frozenset[str],
    known: Mapping[str, Set[str]] | None = None,
) -> list[Flip]:
    """The agents whose outcome changed from `before` to `after`, each with its new
    evidence (`is_new_evidence`): sources read, quoting words about the question's
    `subject` (`question_subject`), from documents that neither its earlier answer, the
    answers it was `shown`, nor the documents `known` to it from earlier rounds (agent ->
    `document_key`s) had."""
    known = known or {}
    changed = []
    for agent_id in sorted(set(before) & set(after)):
        old, new = before[agent_id], after[agent_id]
        if old.outcome == new.outcome:
            continue
        held = documents(old.sources) | set(known.get(agent_id, ()))
        held = held.union(*(documents(r.sources) for r in shown.get(agent_id, ())))
        fresh = tuple(
            sorted({s.normalized_url for s in new.sources if is_new_evidence(s, held, subject)})
        )
        changed.append(Flip(agent_id, old.outcome, new.outcome, fresh))
    return changed


def next_standing(
    standing: Mapping[str, AgentResult],
    revised: Mapping[str, AgentResult],
    shown: Mapping[str, Sequence[AgentResult]],
    *,
    subject: frozenset[str],
    known: Mapping[str, Set[str]] | None = None,
) -> tuple[dict[str, AgentResult], list[Flip]]:
    """Each agent's standing answer after a round, and the round's flips. A revision
    replaces the standing answer when it changes the outcome with new evidence, or keeps
    the outcome (`_kept`); a change without new evidence is a marked flip and the standing
    answer stays (a herd does not win by talking). Agents not revised keep theirs."""
    round_flips = flips(standing, revised, shown, subject=subject, known=known)
    unsupported = {flip.agent_id for flip in round_flips if not flip.supported}
    after: dict[str, AgentResult] = {}
    for agent_id, answer in standing.items():
        revision = revised.get(agent_id)
        if revision is None or agent_id in unsupported:
            after[agent_id] = answer
        elif revision.outcome == answer.outcome:
            after[agent_id] = _kept(answer, revision)
        else:
            after[agent_id] = revision
    return after, round_flips


def _kept(earlier: AgentResult, revision: AgentResult) -> AgentResult:
    """A revision that keeps `earlier`'s outcome, with the earlier sources it does not cite
    again: a round examines the disagreement, so an agent cites what it discusses, and the
    evidence it had for the same outcome stays its evidence (else its vote would fall
    under the source thresholds and drop out of the verdict for keeping its answer)."""
    cited = _urls(revision)
    carried = tuple(s for s in earlier.sources if s.normalized_url not in cited)
    if not carried:
        return revision
    return revision.model_copy(update={"sources": (*revision.sources, *carried)})


def stop_reason(
    ballots: Sequence[Ballot],
    candidates: Sequence[str],
    round_: int,
    changed: int,
    params: DebateParams,
) -> StopReason | None:
    """Whether to stop after round `round_` (0: the independent answers) given the
    counted `ballots` and how many agents `changed` outcome in it; None: go on."""
    if ballots and max(bayesian_posterior(ballots, candidates).values()) >= params.stop_posterior:
        return StopReason.CONVERGED
    if round_ >= params.max_rounds:
        return StopReason.EXHAUSTED
    if round_ > 0 and changed == 0:
        return StopReason.STALLED
    return None


def strength(outcomes: Sequence[str]) -> ConsensusStrength:
    """How broad the agreement among `outcomes` (one per counted vote) is."""
    if not outcomes:
        return ConsensusStrength.SPLIT
    ranked = Counter(outcomes).most_common()
    share = ranked[0][1] / len(outcomes)
    if share == 1:
        return ConsensusStrength.UNANIMOUS
    if share > 0.8:
        return ConsensusStrength.STRONG
    if share >= 0.6:
        return ConsensusStrength.MODERATE
    if share > 0.5:
        return ConsensusStrength.WEAK
    if ranked[0][1] - ranked[1][1] <= 1:
        return ConsensusStrength.CONTESTED
    return ConsensusStrength.SPLIT
