"""Consensus core throughput and how it grows with the number of sources.

Run: .venv/bin/python bench/consensus.py [--seconds S]

1. Results per second for 7 agents x 200 sources, half of each agent's sources shared by
   all agents: input parsing (pydantic), evaluation, and proof building, each alone and
   together.
2. Time per result from 50 to 2,000 sources per agent, and the log-log slope of time
   against sources (1.0 is linear; the seed's merge would approach 2.0).

The URL normalization cache is cleared before every run so each run pays for its URLs
the way a new market does.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

from oracle.core import (
    ConsensusParams,
    SourceThresholds,
    build_proof,
    evaluate,
    normalize_url,
    parse_consensus_input,
)
from oracle.testing import consensus_document, result_dict, source_dicts

AGENTS = 7
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


def rate(step: Callable[[], object], seconds: float) -> tuple[float, float]:
    """(runs per second, seconds per run) over at least `seconds` of repeated runs."""
    runs, elapsed = 0, 0.0
    while elapsed < seconds or runs < 3:
        normalize_url.cache_clear()
        start = time.perf_counter()
        step()
        elapsed += time.perf_counter() - start
        runs += 1
    return runs / elapsed, elapsed / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    seconds = parser.parse_args().seconds

    raw = document(200)
    parsed = parse_consensus_input(raw)
    result = evaluate(parsed, PARAMS, THRESHOLDS)
    print(
        f"{AGENTS} agents x 200 sources, half shared ({result.overlap.total_unique_sources} unique)"
    )
    steps: dict[str, Callable[[], object]] = {
        "parse input": lambda: parse_consensus_input(raw),
        "evaluate": lambda: evaluate(parsed, PARAMS, THRESHOLDS),
        "build proof": lambda: build_proof(parsed, result, PARAMS, THRESHOLDS),
        "all three": lambda: build_proof(
            parsed_ := parse_consensus_input(raw),
            evaluate(parsed_, PARAMS, THRESHOLDS),
            PARAMS,
            THRESHOLDS,
        ),
    }
    for name, step in steps.items():
        per_second, per_run = rate(step, seconds)
        print(f"  {name:<12} {per_second:8.1f} results/s  {per_run * 1000:8.2f} ms/result")

    print("\nscaling (parse + evaluate + proof), 7 agents, half of each agent's sources shared")
    print(f"  {'sources/agent':>13} {'ms/result':>10} {'us/source':>10}")
    sizes = [50, 100, 200, 500, 1000, 2000]
    timings = []
    for size in sizes:
        raw_size = document(size)

        def full(raw_size: dict[str, Any] = raw_size) -> object:
            parsed_size = parse_consensus_input(raw_size)
            return build_proof(
                parsed_size, evaluate(parsed_size, PARAMS, THRESHOLDS), PARAMS, THRESHOLDS
            )

        _, per_run = rate(full, seconds / 2)
        timings.append(per_run)
        print(f"  {size:>13} {per_run * 1000:>10.2f} {per_run / (size * AGENTS) * 1e6:>10.2f}")
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in timings]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mean_x) ** 2 for x in xs
    )
    print(f"  log-log slope of time against sources: {slope:.2f} (1.00 = linear)")


if __name__ == "__main__":
    main()
