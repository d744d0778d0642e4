"""Builders of realistic agent results, for tests, benchmarks and the bundled examples.

Sources are spread over the five categories the default thresholds ask for, with
enough `official` and `news` sources to pass them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oracle.core.models import AgentResult, ResearchSource

# (category, share of an agent's sources); official 10%, news 40% pass 5/50 and 15/50.
CATEGORY_MIX: tuple[tuple[str, float], ...] = (
    ("official", 0.10),
    ("news", 0.40),
    ("academic", 0.15),
    ("data", 0.20),
    ("reference", 0.15),
)


def source_dicts(
    prefix: str, count: int, *, credibility: float = 0.8, relevance: float = 0.7, quote: str = ""
) -> list[dict[str, Any]]:
    """`count` distinct sources under https://<category>.example/<prefix>/<i>, each
    quoting `quote` when one is given."""
    sources = []
    boundaries: list[tuple[float, str]] = []
    cumulative = 0.0
    for category, share in CATEGORY_MIX:
        cumulative += share
        boundaries.append((cumulative, category))
    for index in range(count):
        position = (index + 0.5) / count
        category = next(c for edge, c in boundaries if position <= edge + 1e-12)
        sources.append(
            {
                "url": f"https://{category}.example/{prefix}/{index}",
                "title": f"{category} report {prefix}/{index}",
                "category": category,
                "credibility_score": credibility,
                "relevance_score": relevance,
                **({"quote": quote} if quote else {}),
            }
        )
    return sources


def result_dict(
    agent_id: str,
    outcome: str,
    confidence: float,
    source_count: int = 50,
    *,
    shared: Sequence[dict[str, Any]] = (),
    credibility: float = 0.8,
    reasoning: str | None = None,
) -> dict[str, Any]:
    """An agent result as the consensus input document spells it.

    `shared` sources are cited in addition to `source_count - len(shared)` of its own.
    """
    own = source_dicts(agent_id, source_count - len(shared), credibility=credibility)
    return {
        "agent_id": agent_id,
        "outcome": outcome,
        "confidence": confidence,
        "reasoning": reasoning or f"{agent_id} concluded {outcome} from its sources",
        "sources": [*shared, *own],
    }


def result(
    agent_id: str, outcome: str, confidence: float, source_count: int = 50, **kw: Any
) -> AgentResult:
    return AgentResult.model_validate(
        result_dict(agent_id, outcome, confidence, source_count, **kw)
    )


def source(url: str, category: str = "news", credibility: float = 0.8) -> ResearchSource:
    return ResearchSource(
        url=url, title=url, category=category, credibility_score=credibility, relevance_score=0.5
    )


def consensus_document(
    results: Sequence[dict[str, Any]],
    *,
    market_id: str = "m-1",
    question: str = "Did the event happen?",
    outcomes: Sequence[str] | None = None,
    failures: Sequence[dict[str, str]] = (),
) -> dict[str, Any]:
    market: dict[str, Any] = {
        "id": market_id,
        "question": question,
        "criteria": "Per official sources.",
    }
    if outcomes is not None:
        market["outcomes"] = list(outcomes)
    return {"market": market, "results": list(results), "failures": list(failures)}
