"""Write the bundled backtest set, oracle/examples/backtest/: recorded agent answers with the
final outcome each market settled on, so that `oracle backtest oracle/examples/backtest`
works on a fresh clone (docs/backtest.md shows its report, threshold sweep and the
comparison of the conflict resolution modes).

    .venv/bin/python scripts/make_backtest_set.py            # rewrite the files
    .venv/bin/python scripts/make_backtest_set.py --check    # exit 1 if they are stale
    .venv/bin/python scripts/make_backtest_set.py --seed 7 --out /tmp/set7  # another draw

Seeded and deterministic: the same files every run (a test holds this). The set is
synthetic but shaped like what a live oracle meets: four research agents from four model
families answer 50 markets, each recording one consensus input document (the format
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

Then 10 contested markets (41-50), two agents against two, written to debate
(`consensus.conflict_resolution: debate`):

- `contested-evidence` (3): a hesitant wrong agent researches again, finds sources
  nobody had, and rightly changes its answer.
- `contested-herding` (3): a confident wrong agent (`llama`, with `gpt` on the same
  widely shared wrong report) talks one or both of the right agents over: they change
  their answer citing nothing but their own sources and the report they were shown (a
  flip without new evidence, which the debate marks and does not count).
  In the other kinds, which two agents are wrong is drawn at random (the two wrong ones
  cite one shared report), and only a wrong `llama` is sure of itself.
- `contested-misled` (1): a right agent researches again and finds new, misleading
  sources, and changes its answer to the wrong one (evidence can be wrong too).
- `contested-stalemate` (3): nobody changes their mind.

**Debate rounds.** For every market with no majority answer (no outcome held by more
than half of the agents that answered, the 10 above and any such market among the 40),
`debate/round-<n>/<market>.json` (n = 1 to 3, the default `max_rounds`) records what each
agent that would change its answer answers when it is challenged in a debate, in the
format of the recordings; the `replay` agent replays them (an agent with no answer
recorded keeps its standing one). An agent answers the same whichever round it is first
challenged in, so the rounds replay under every critique topology. In the markets among
the 40, a hesitant wrong agent (not `llama`, who stays sure of itself) researches again
and finds the truth half of the time.
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
CONTESTED_KINDS = (
    ("contested-evidence", 3),
    ("contested-herding", 3),
    ("contested-misled", 1),
    ("contested-stalemate", 3),
)
DEBATE_ROUNDS = 3  # consensus.debate.max_rounds by default

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


def _sources(
    prefix: str, count: int, credibility: float = 0.8, quote: str = ""
) -> list[dict[str, Any]]:
    """`count` sources over the categories the default thresholds ask for (short names
    keep the set small: each agent needs 50 sources to count by default); each quoting
    `quote` when one is given."""
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
                **({"quote": quote} if quote else {}),
            }
        )
    return sources


def _finding(question: str, outcome: str) -> str:
    """What a page found in new research says: it names the question's subject (a debate
    counts a flip only for sources read, quoted and about the question)."""
    return f"On whether {question[0].lower()}{question[1:].rstrip('?')}: {outcome}."


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


def _revised(vote: dict[str, Any], outcome: str, confidence: float, **more: Any) -> dict[str, Any]:
    return {**vote, "outcome": outcome, "confidence": confidence, **more}


def _contested(
    rng: random.Random, market: str, kind: str, truth: str, wrong: str, *, question: str
) -> tuple[list[Any], list[Any]]:
    """Two against two: the independent answers, and the revisions of the agents that
    change their answer when challenged."""
    if kind == "contested-herding":
        # llama (sure of itself) and gpt on one widely shared, wrong report.
        wrong_side = ["gpt-researcher", "llama-researcher"]
    else:
        wrong_side = sorted(rng.sample(sorted(AGENTS), 2))
    report = _sources(f"{market}r", rng.randint(24, 30), credibility=0.85)
    votes = {}
    for agent in AGENTS:
        is_wrong = agent in wrong_side
        sure = agent == "llama-researcher" and is_wrong
        votes[agent] = _vote(
            agent,
            wrong if is_wrong else truth,
            _confidence(rng, (0.9, 0.97) if sure else (0.6, 0.82)),
            market,
            sources=rng.randint(52, 56),
            shared=report if is_wrong else None,
        )
    right_side = [agent for agent in AGENTS if agent not in wrong_side]
    hesitant = [agent for agent in wrong_side if agent != "llama-researcher"]
    if kind == "contested-herding":
        # Persuaded without evidence: its own sources again, plus the report it was shown
        # (which both wrong agents cite, so whoever showed it, nothing in it is new).
        herded = right_side[-1:] if rng.random() < 0.67 else right_side
        revisions = [
            _revised(
                votes[agent],
                wrong,
                _confidence(rng, (0.75, 0.88)),
                sources=[*votes[agent]["sources"], *report],
                reasoning=f"Persuaded: the other answers cite a report for {wrong}.",
            )
            for agent in herded
        ]
    elif kind == "contested-evidence":
        fresh = _sources(
            f"{market}new", rng.randint(50, 56), credibility=0.9, quote=_finding(question, truth)
        )
        revisions = [
            _revised(
                votes[rng.choice(hesitant)],
                truth,
                _confidence(rng, (0.78, 0.9)),
                sources=fresh,
                reasoning=f"Researched again: newer official sources say {truth}.",
            )
        ]
    elif kind == "contested-misled":
        fresh = _sources(
            f"{market}new", rng.randint(50, 56), credibility=0.75, quote=_finding(question, wrong)
        )
        revisions = [
            _revised(
                votes[rng.choice(right_side)],
                wrong,
                _confidence(rng, (0.7, 0.82)),
                sources=fresh,
                reasoning=f"Researched again: a later (mistaken) report says {wrong}.",
            )
        ]
    else:
        revisions = []
    return list(votes.values()), revisions


def _no_majority(votes: list[dict[str, Any]]) -> bool:
    counts: dict[str, int] = {}
    for vote in votes:
        counts[vote["outcome"]] = counts.get(vote["outcome"], 0) + 1
    definite = {o for o in counts if o != "UNDETERMINED"}
    return len(definite) >= 2 and max(counts.values()) * 2 <= len(votes)


def _second_look(
    seed: int, market: str, votes: list[dict[str, Any]], truth: str, question: str
) -> list[Any]:
    """Among the first 40 markets: a hesitant wrong agent (not `llama`) researches again
    when challenged and finds the truth half of the time."""
    rng = random.Random(f"{seed}/{market}")
    revisions = []
    for vote in votes:
        wrong = vote["outcome"] not in (truth, "UNDETERMINED")
        if wrong and vote["agent_id"] != "llama-researcher" and rng.random() < 0.5:
            fresh = _sources(
                f"{market}{vote['model_family'][:2]}new",
                rng.randint(50, 56),
                quote=_finding(question, truth),
            )
            revisions.append(
                _revised(
                    vote,
                    truth,
                    _confidence(rng, (0.75, 0.9)),
                    sources=fresh,
                    reasoning=f"Researched again: newer sources say {truth}.",
                )
            )
    return revisions


def recordings(seed: int = SEED) -> dict[str, dict[str, Any]]:
    """Every recording of the set, by file name (debate rounds under `debate/`); another
    `seed` draws another set of the same kinds."""
    rng = random.Random(seed)
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
        if _no_majority(votes):
            _debate_rounds(documents, document, _second_look(seed, market, votes, truth, question))
    # The contested markets, from their own random sequence: the 40 above stay as they were.
    rng = random.Random(f"{seed}/contested")
    kinds = [kind for kind, count in CONTESTED_KINDS for _ in range(count)]
    rng.shuffle(kinds)
    for index, kind in enumerate(kinds, start=MARKETS + 1):
        market = f"{index:02d}-{kind}"
        question = _question(rng, rng.choice(BINARY_QUESTIONS))
        truth = rng.choice(("YES", "NO"))
        votes, revisions = _contested(
            rng, market, kind, truth, "NO" if truth == "YES" else "YES", question=question
        )
        document = consensus_document(votes, market_id=market, question=question)
        documents[f"{market}.json"] = {**document, "final_outcome": truth}
        _debate_rounds(documents, document, revisions)
    return documents


def _debate_rounds(
    documents: dict[str, dict[str, Any]], document: dict[str, Any], revisions: list[Any]
) -> None:
    """The same revisions for every round: an agent answers so when first challenged."""
    if not revisions:
        return
    for round_ in range(1, DEBATE_ROUNDS + 1):
        name = f"debate/round-{round_}/{document['market']['id']}.json"
        documents[name] = {**document, "results": revisions, "failures": []}


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, separators=(",", ":")) + "\n"


def _written(directory: Path = OUT_DIR) -> list[Path]:
    """The set's files on disk: the recordings and their debate rounds."""
    return [*directory.glob("*.json"), *directory.glob("debate/round-*/*.json")]


def write(directory: Path, seed: int = SEED) -> int:
    """Write the set drawn with `seed` to `directory`, removing files it no longer has."""
    documents = {name: render(document) for name, document in recordings(seed).items()}
    for stale in _written(directory):
        if str(stale.relative_to(directory)) not in documents:
            stale.unlink()
    for name, text in documents.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
    return len(documents)


USAGE = "usage: make_backtest_set.py [--check | --seed N --out DIR]"


def main(arguments: list[str]) -> int:
    if arguments == ["--check"]:
        documents = {name: render(document) for name, document in recordings().items()}
        on_disk = {str(p.relative_to(OUT_DIR)): p.read_text(encoding="utf-8") for p in _written()}
        if on_disk != documents:
            print(f"{OUT_DIR} is stale: run scripts/make_backtest_set.py", file=sys.stderr)
            return 1
        return 0
    if len(arguments) == 4 and arguments[0] == "--seed" and arguments[2] == "--out":
        # Another draw of the same kinds, elsewhere: how much do the figures owe the seed?
        if not arguments[1].isdigit():
            print(f"--seed: expected a whole number, got {arguments[1]!r}", file=sys.stderr)
            return 2
        seed, directory = int(arguments[1]), Path(arguments[3])
        if directory.resolve() == OUT_DIR:
            print("--out: not the bundled set (it is drawn with the default seed)", file=sys.stderr)
            return 2
    elif arguments:
        print(USAGE, file=sys.stderr)
        return 2
    else:
        seed, directory = SEED, OUT_DIR
    count = write(directory, seed)
    print(f"wrote {count} recordings to {directory}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
