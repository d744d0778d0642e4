"""Per-agent evidence thresholds: every shortfall has a reason; nobody is dropped silently."""

from __future__ import annotations

from oracle.core import ResearchSource, SourceThresholds
from oracle.core.validation import evidence_shortfalls
from oracle.testing import result_dict, source

from .helpers import verdict


def test_valid_agent_has_no_shortfalls(thresholds: SourceThresholds) -> None:
    sources = [ResearchSource.model_validate(s) for s in result_dict("a", "YES", 0.9)["sources"]]
    assert evidence_shortfalls(sources, thresholds) == []


def test_every_shortfall_is_named(thresholds: SourceThresholds) -> None:
    sources = [source(f"https://x.example/{i}", category="blog") for i in range(10)]
    assert evidence_shortfalls(sources, thresholds) == [
        "only 10 distinct sources, need 50",
        "only 1 source categories, need 5",
        "only 0 official sources, need 5",
        "only 0 news sources, need 15",
    ]


def test_repeated_urls_count_once() -> None:
    document = result_dict("padder", "YES", 0.9, 50)
    # Same page cited 40 more times under tracking-parameter variants.
    first = document["sources"][0]
    document["sources"] += [{**first, "url": f"{first['url']}?utm_source=x{i}"} for i in range(40)]
    result = verdict([document, ("b", "YES", 0.9), ("c", "YES", 0.9)])
    padder = next(v for v in result.votes if v.agent_id == "padder")
    assert padder.source_count == 50
    assert padder.counted


def test_excluded_agents_are_listed_with_reasons() -> None:
    thin = result_dict("thin", "NO", 0.99, 20)
    result = verdict([thin, ("b", "YES", 0.8), ("c", "YES", 0.8), ("d", "YES", 0.8)])
    assert result.reached
    assert result.valid_agents == 3
    assert len(result.excluded) == 1
    assert result.excluded[0].agent_id == "thin"
    assert "only 20 distinct sources, need 50" in result.excluded[0].reasons
    vote = next(v for v in result.votes if v.agent_id == "thin")
    assert not vote.counted
    assert vote.excluded_reasons == result.excluded[0].reasons
    assert "thin" not in {d.agent_id for d in result.dissent}
