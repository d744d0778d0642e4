"""The `oracle consensus` path against a plain script of the design document's algorithm.

Run: .venv/bin/python bench/consensus.py [--seconds S] [--sizes 50,100,...]

For 7 agents x {50, 100, 200, 500, 1000, 2000} sources each (half of each agent's sources
shared by all agents, as `document` builds them), from the same JSON text:

- ours: the whole in-process path of `oracle consensus FILE`: the text decoded as the
  command decodes it (`oracle.safe_json.loads`), then the command's own
  `oracle.cli.consensus.run_consensus`: read and validated (`read_consensus_input`: every
  field as `parse_consensus_input` checks it, every URL read as a browser reads it),
  evaluated (`evaluate`), and the proof built with its RFC 8785 checksum (`build_proof`),
  with the cyclic garbage collector paused, from the decoding on, as the command pauses it;
- plain: `plain_consensus` below, the design document's algorithm
  (docs/consensus.md; seed: the consensus-algorithm document) done plainly:
  `json.loads`, the evidence checks, weights, the BFT head count and the merged sources and
  overlap with plain dicts, then SHA-256 over `json.dumps(..., sort_keys=True,
  separators=(",", ":"))` of a result of comparable size (every vote, every merged source
  with its citing agents, every overlap pair). It validates nothing beyond what the
  algorithm reads and compares URLs as written.

Each figure is the median of interleaved runs (ours, plain, ours, ...) over about
`--seconds` per size; the ratio is ours / plain (below 1: ours is faster). Times are the
process's CPU time (`time.process_time`) unless `--clock wall`: on a machine shared with
other work, a run's wall time mostly measures when the scheduler let it run. The URL caches
are cleared before every run of ours, so each run pays for its URLs as a new market does.

Run from a checkout other than the one installed (a git worktree), set `PYTHONPATH` to it:
the script's own directory, not the checkout, is first on the import path.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from fractions import Fraction
from itertools import combinations
from typing import Any

from oracle import safe_json
from oracle.cli.consensus import collector_paused, run_consensus
from oracle.core import ConsensusParams, SourceThresholds
from oracle.core.urls import normalize_url, parse_web_url
from oracle.testing import consensus_document, result_dict, source_dicts

AGENTS = 7
SIZES = (50, 100, 200, 500, 1000, 2000)
PARAMS = ConsensusParams()
THRESHOLDS = SourceThresholds()


def document(sources_per_agent: int) -> dict[str, Any]:
    shared = source_dicts("shared", sources_per_agent // 2)
    outcomes = ["YES"] * 5 + ["NO"] * 2
    return consensus_document(
        [
            result_dict(f"agent-{i}", outcomes[i], 0.6 + 0.05 * i, sources_per_agent, shared=shared)
            for i in range(AGENTS)
        ]
    )


def ours(text: str) -> str:
    """`oracle consensus FILE` in-process, from the file's text to the proof's checksum."""
    normalize_url.cache_clear()
    parse_web_url.cache_clear()
    with collector_paused():
        _, proof = run_consensus(safe_json.loads(text), PARAMS, THRESHOLDS)
    return str(proof["checksum"])


# The plain script: the design document's algorithm on plain dicts.
MIN_TOTAL, MIN_CATEGORIES, MIN_OFFICIAL, MIN_NEWS = 50, 5, 5, 15
THRESHOLD = Fraction(2, 3)


def _quality(sources: list[dict[str, Any]], categories: int) -> float:
    if not sources:
        return 0.0
    average = sum(s["credibility_score"] for s in sources) / len(sources)
    return min(average + min(categories / 25, 0.2), 1.0)


def plain_consensus(text: str) -> str:
    """The design document's algorithm, plainly: the checksum of its result."""
    data = json.loads(text)
    votes, valid = [], []
    for answer in sorted(data["results"], key=lambda r: r["agent_id"]):
        distinct: dict[str, dict[str, Any]] = {}
        for source in answer["sources"]:
            distinct.setdefault(source["url"], source)
        sources = list(distinct.values())
        counts: dict[str, int] = {}
        for source in sources:
            counts[source["category"]] = counts.get(source["category"], 0) + 1
        reasons = []
        if len(sources) < MIN_TOTAL:
            reasons.append(f"only {len(sources)} distinct sources, need {MIN_TOTAL}")
        if len(counts) < MIN_CATEGORIES:
            reasons.append(f"only {len(counts)} source categories, need {MIN_CATEGORIES}")
        if counts.get("official", 0) < MIN_OFFICIAL:
            reasons.append(f"only {counts.get('official', 0)} official sources")
        if counts.get("news", 0) < MIN_NEWS:
            reasons.append(f"only {counts.get('news', 0)} news sources")
        quality = _quality(sources, len(counts))
        weight = answer["confidence"] * quality * min(len(sources) / MIN_TOTAL, 1.0)
        vote = {
            "agent_id": answer["agent_id"],
            "outcome": answer["outcome"],
            "confidence": answer["confidence"],
            "weight": weight,
            "source_quality": quality,
            "source_count": len(sources),
            "counted": not reasons,
            "excluded_reasons": reasons,
            "reasoning": answer["reasoning"],
        }
        votes.append(vote)
        if not reasons:
            valid.append((answer, sources, vote))

    heads: dict[str, int] = {}
    weights: dict[str, float] = {}
    for answer, _, vote in valid:
        heads[answer["outcome"]] = heads.get(answer["outcome"], 0) + 1
        weights[answer["outcome"]] = weights.get(answer["outcome"], 0.0) + vote["weight"]
    leader = max(heads, key=lambda o: (heads[o], weights[o])) if heads else None
    agreeing = [v for v in valid if v[0]["outcome"] == leader]
    reached = bool(valid) and Fraction(len(agreeing), len(valid)) >= THRESHOLD
    total_weight = sum(weights.values())
    mass = sum(v[2]["source_quality"] * v[2]["source_count"] for v in agreeing)
    confidence = (
        sum(v[0]["confidence"] * v[2]["source_quality"] * v[2]["source_count"] for v in agreeing)
        / mass
        if reached and mass
        else 0.0
    )

    url_sets = {v[0]["agent_id"]: {s["url"] for s in v[1]} for v in valid}
    pairs = []
    for (a, urls_a), (b, urls_b) in combinations(url_sets.items(), 2):
        union = len(urls_a | urls_b)
        pairs.append({"agents": [a, b], "jaccard": len(urls_a & urls_b) / union if union else 0})
    average = sum(p["jaccard"] for p in pairs) / len(pairs) if pairs else 0.0

    best: dict[str, dict[str, Any]] = {}
    cited_by: dict[str, list[str]] = {}
    for answer, sources, _ in agreeing if reached else valid:
        for source in sources:
            url = source["url"]
            current = best.get(url)
            score = source["relevance_score"] * source["credibility_score"]
            if current is None or score > current["relevance_score"] * current["credibility_score"]:
                best[url] = source
            cited_by.setdefault(url, []).append(answer["agent_id"])
    merged = [
        {
            "url": url,
            "title": s.get("title", ""),
            "category": s["category"],
            "credibility_score": s["credibility_score"],
            "relevance_score": s["relevance_score"],
            "published_at": s.get("published_at"),
            "cited_by": cited_by[url],
        }
        for url, s in best.items()
    ]
    merged.sort(key=lambda s: (-s["relevance_score"] * s["credibility_score"], s["url"]))

    result = {
        "market": data["market"],
        "verdict": {
            "reached": reached,
            "outcome": leader if reached else "UNDETERMINED",
            "confidence": confidence,
            "agreement_ratio": len(agreeing) / len(valid) if valid else 0.0,
            "weighted_ratio": sum(v[2]["weight"] for v in agreeing) / total_weight
            if total_weight
            else 0.0,
            "valid_agents": len(valid),
            "fault_tolerance": max(len(valid) - 1, 0) // 3,
        },
        "votes": votes,
        "overlap": {
            "average": average,
            "max": max((p["jaccard"] for p in pairs), default=0.0),
            "pairs": pairs,
            "total_unique_sources": len(set().union(*url_sets.values())),
        },
        "sources": merged,
    }
    canonical = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def interleaved(
    steps: dict[str, Callable[[], object]], seconds: float, clock: Callable[[], float]
) -> dict[str, list[float]]:
    """Seconds per run of each step by `clock`, the steps run in turn until `seconds` of
    wall time have passed (at least 5 runs each)."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for step in steps.values():  # warm up: imports, caches of the interpreter
        step()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or min(len(t) for t in times.values()) < 5:
        for name, step in steps.items():
            start = clock()
            step()
            times[name].append(clock() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per size")
    parser.add_argument(
        "--sizes", default=",".join(map(str, SIZES)), help="sources per agent, comma-separated"
    )
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    clock = time.process_time if arguments.clock == "cpu" else time.perf_counter

    print(
        f"oracle consensus (in-process) vs the plain script, {AGENTS} agents, half shared;"
        f" median {arguments.clock} time"
    )
    print(f"  {'sources/agent':>13} {'ours ms':>9} {'plain ms':>9} {'ours/plain':>10} {'runs':>5}")
    for size in sizes:
        text = json.dumps(document(size))
        times = interleaved(
            {
                "ours": lambda text=text: ours(text),
                "plain": lambda text=text: plain_consensus(text),
            },
            arguments.seconds,
            clock,
        )
        ours_ms = statistics.median(times["ours"]) * 1000
        plain_ms = statistics.median(times["plain"]) * 1000
        print(
            f"  {AGENTS} x {size:<9} {ours_ms:>9.2f} {plain_ms:>9.2f} {ours_ms / plain_ms:>10.2f}"
            f" {len(times['ours']):>5}"
        )


if __name__ == "__main__":
    main()
