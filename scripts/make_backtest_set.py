"""Write the bundled backtest set, oracle/examples/backtest/: recorded agent answers with the
final outcome each market settled on, so that `oracle backtest oracle/examples/backtest`
works on a fresh clone (docs/backtest.md shows its report and threshold sweep).

    .venv/bin/python scripts/make_backtest_set.py            # rewrite the files
    .venv/bin/python scripts/make_backtest_set.py --check    # exit 1 if they are stale

Seeded and deterministic: the same files every run (a test holds this). The set is
synthetic but shaped like what a live oracle meets: four research agents from four model
families answer 40 markets, each recording one consensus input document (the format
`oracle consensus` reads) plus `"final_outcome"`. The kinds of market, and why each is
there:

- `clear`: the event is well reported. Each family is right most of the time, with
  confidence that tracks it (a wrong answer is a hesitant one), except:
- the **confidently wrong family**: `llama` is right less often and, when wrong, just as
  sure of itself as when right; its Brier score and calibration bins show it.
- `herding`: three agents cite one widely shared (and wrong) report, most of their
  sources the same, and agree on its answer; the fourth researched independently and is
  right. The average pairwise overlap stays under `consensus.max_source_overlap`, so only
  a stricter `consensus.threshold` keeps the wrong answer off-chain.
- `too-early`: the question was asked before the outcome was known. Most agents say
  UNDETERMINED (research again later); `llama` guesses, confidently.
- `multi`: three outcomes (an election, a tournament), with the votes split.
- `outage`: one or two agents time out; the rest answer.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from oracle.testing import CATEGORY_MIX, consensus_document

SEED = 20261123
MARKETS = 40
OUT_DIR = Path(__file__).resolve().parent.parent / "oracle" / "examples" / "backtest"

# agent -> (model family, provider, chance of being right on a clear market,
#            confidence range when right, confidence range when wrong)
AGENTS: dict[str, tuple[str, str, float, tuple[float, float], tuple[float, float]]] = {
    "claude-researcher": ("claude", "anthropic", 0.93, (0.78, 0.95), (0.52, 0.68)),
    "gpt-researcher": ("gpt", "openai", 0.91, (0.76, 0.94), (0.52, 0.7)),
    "gemini-researcher": ("gemini", "google", 0.89, (0.74, 0.93), (0.5, 0.7)),
    "llama-researcher": ("llama", "meta", 0.72, (0.84, 0.97), (0.84, 0.97)),
}
KINDS = (("clear", 23), ("herding", 4), ("too-early", 5), ("multi", 4), ("outage", 4))

BINARY_QUESTIONS = (
    "Did the central bank of {place} cut its policy rate at its {month} meeting?",
    "Did {company} ship its announced product before the end of {month}?",
    "Did the {team} win the {month} final?",
    "Was {month}'s headline inflation in {place} above 3.0%?",
    "Did the {place} parliament pass the budget bill by the end of {month}?",
    "Did {company}'s quarterly revenue, reported in {month}, beat the consensus estimate?",
    "Did the launch from {place} scheduled for {month} reach orbit?",
    "Was the {month} monthly rainfall in {place} above its 30-year average?",
)
MULTI_QUESTIONS = (
    ("Who won the {month} mayoral election in {place}?", ("Alvarez", "Brennan", "Chen")),
    ("Which club won the {month} cup in {place}?", ("Rovers", "United", "Athletic")),
    ("Which bid won the {month} stadium tender in {place}?", ("North", "Harbour", "Central")),
)
PLACES = ("Avalon", "Brightwater", "Caldera", "Dunmore", "Eastmarch", "Fairhaven", "Glenrock")
COMPANIES = ("Acme Robotics", "Borealis Energy", "Cirrus Labs", "Delta Freight", "Ember Bio")
TEAMS = ("Falcons", "Harriers", "Kestrels", "Ospreys")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August")


def _question(rng: random.Random, template: str) -> str:
    return template.format(
        place=rng.choice(PLACES),
        company=rng.choice(COMPANIES),
        team=rng.choice(TEAMS),
        month=rng.choice(MONTHS),
    )


def _confidence(rng: random.Random, bounds: tuple[float, float]) -> float:
    return round(rng.uniform(*bounds), 2)


def _sources(prefix: str, count: int, credibility: float = 0.8) -> list[dict[str, Any]]:
    """`count` sources over the categories the default thresholds ask for (short names
    keep the set small: each agent needs 50 sources to count by default)."""
    edges, cumulative = [], 0.0
    for category, share in CATEGORY_MIX:
        cumulative += share
        edges.append((cumulative, category))
    sources = []
    for index in range(count):
        position = (index + 0.5) / count
        category = next(c for edge, c in edges if position <= edge + 1e-12)
        sources.append(
            {
                "url": f"https://{category}.example/{prefix}/{index}",
                "title": f"{category} {index}",
                "category": category,
                "credibility_score": credibility,
                "relevance_score": 0.7,
            }
        )
    return sources


def _vote(
    agent: str,
    outcome: str,
    confidence: float,
    market: str,
    *,
    sources: int,
    shared: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    family, provider, *_ = AGENTS[agent]
    shared = shared or []
    # Sources named per market and family, so no two recordings share one by accident.
    own = _sources(f"{market}{family[:2]}", sources - len(shared))
    return {
        "agent_id": agent,
        "outcome": outcome,
        "confidence": confidence,
        "reasoning": f"Concluded {outcome} from {sources} sources.",
        "sources": [*shared, *own],
        "provider": provider,
        "model_family": family,
    }


def _clear(rng: random.Random, market: str, outcomes: tuple[str, ...], truth: str) -> list[Any]:
    votes = []
    for agent, (_, _, right_chance, right_range, wrong_range) in AGENTS.items():
        if rng.random() < right_chance:
            outcome, confidence = truth, _confidence(rng, right_range)
        else:
            outcome = rng.choice([o for o in outcomes if o != truth])
            confidence = _confidence(rng, wrong_range)
        votes.append(_vote(agent, outcome, confidence, market, sources=rng.randint(50, 58)))
    return votes


def _herding(rng: random.Random, market: str, truth: str, wrong: str) -> list[Any]:
    shared = _sources(f"{market}v", rng.randint(30, 36), credibility=0.85)
    votes = []
    for agent in AGENTS:
        if agent == "claude-researcher":
            votes.append(_vote(agent, truth, _confidence(rng, (0.62, 0.8)), market, sources=52))
        else:
            confidence = _confidence(rng, (0.8, 0.92))
            votes.append(_vote(agent, wrong, confidence, market, sources=52, shared=shared))
    return votes


def _too_early(rng: random.Random, market: str, outcomes: tuple[str, ...]) -> list[Any]:
    votes = []
    for agent in AGENTS:
        if agent == "llama-researcher":
            guess = rng.choice(outcomes)
            votes.append(_vote(agent, guess, _confidence(rng, (0.85, 0.95)), market, sources=50))
        else:
            confidence = _confidence(rng, (0.55, 0.75))
            votes.append(
                _vote(agent, "UNDETERMINED", confidence, market, sources=rng.randint(50, 54))
            )
    return votes


def recordings() -> dict[str, dict[str, Any]]:
    """Every recording of the set, by file name."""
    rng = random.Random(SEED)
    kinds = [kind for kind, count in KINDS for _ in range(count)]
    assert len(kinds) == MARKETS
    rng.shuffle(kinds)
    documents = {}
    for index, kind in enumerate(kinds, start=1):
        market = f"{index:02d}-{kind}"
        failures: list[dict[str, str]] = []
        if kind == "multi":
            template, outcomes = rng.choice(MULTI_QUESTIONS)
            question, truth = _question(rng, template), rng.choice(outcomes)
            votes = _clear(rng, market, outcomes, truth)
        else:
            outcomes = ("YES", "NO")
            question = _question(rng, rng.choice(BINARY_QUESTIONS))
            truth = rng.choice(outcomes)
            if kind == "herding":
                votes = _herding(rng, market, truth, "NO" if truth == "YES" else "YES")
            elif kind == "too-early":
                votes = _too_early(rng, market, outcomes)
            else:
                votes = _clear(rng, market, outcomes, truth)
        if kind == "outage":
            for vote in rng.sample(votes, rng.randint(1, 2)):
                votes.remove(vote)
                failures.append({"agent_id": vote["agent_id"], "error": "timed out after 300 s"})
        document = consensus_document(
            votes,
            market_id=market,
            question=question,
            outcomes=outcomes if kind == "multi" else None,
            failures=failures,
        )
        documents[f"{market}.json"] = {**document, "final_outcome": truth}
    return documents


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, separators=(",", ":")) + "\n"


def main(arguments: list[str]) -> int:
    documents = {name: render(document) for name, document in recordings().items()}
    if arguments == ["--check"]:
        on_disk = {p.name: p.read_text(encoding="utf-8") for p in OUT_DIR.glob("*.json")}
        if on_disk != documents:
            print(f"{OUT_DIR} is stale: run scripts/make_backtest_set.py", file=sys.stderr)
            return 1
        return 0
    if arguments:
        print("usage: make_backtest_set.py [--check]", file=sys.stderr)
        return 2
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for stale in OUT_DIR.glob("*.json"):
        if stale.name not in documents:
            stale.unlink()
    for name, text in documents.items():
        (OUT_DIR / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(documents)} recordings to {OUT_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
