from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.core import AgentResult, ResearchSource, normalize_url
from oracle.core.models import MergedSource
from oracle.core.sources import analyze_overlap, merge_sources, overlap_band, source_quality
from oracle.testing import result, source


def _agent(agent_id: str, urls: list[str]) -> AgentResult:
    return AgentResult(
        agent_id=agent_id,
        outcome="YES",
        confidence=0.9,
        reasoning="",
        sources=tuple(source(u) for u in urls),
    )


def test_source_quality_is_credibility_plus_diversity_bonus() -> None:
    two_categories = [
        source("https://a.example/1", "news", 0.5),
        source("https://a.example/2", "official", 0.7),
    ]
    assert source_quality(two_categories) == pytest.approx(0.6 + 2 / 25)
    assert source_quality(result("a", "YES", 0.9).sources) == pytest.approx(1.0)  # capped
    assert source_quality([]) == 0.0


def test_merge_deduplicates_by_normalized_url_and_records_citers() -> None:
    a = _agent("a", ["https://News.example/x/", "https://only-a.example/1"])
    b = _agent("b", ["https://news.example/x?utm_source=feed", "https://only-b.example/1"])
    merged = {s.url: s.cited_by for s in merge_sources([b, a])}
    assert merged == {
        "https://news.example/x": ("a", "b"),
        "https://only-a.example/1": ("a",),
        "https://only-b.example/1": ("b",),
    }


def test_merge_keeps_best_scored_copy_and_sorts_by_score() -> None:
    low = AgentResult(
        agent_id="a",
        outcome="YES",
        confidence=1,
        reasoning="",
        sources=(
            source("https://s.example/1", credibility=0.2),
            source("https://s.example/2", credibility=0.5),
        ),
    )
    high = AgentResult(
        agent_id="b",
        outcome="YES",
        confidence=1,
        reasoning="",
        sources=(source("https://s.example/1", credibility=0.9),),
    )
    merged = merge_sources([low, high])
    assert [s.url for s in merged] == ["https://s.example/1", "https://s.example/2"]
    assert merged[0].credibility_score == 0.9


def test_overlap_pairwise_jaccard() -> None:
    a = _agent("a", ["https://x.example/1", "https://x.example/2"])
    b = _agent("b", ["https://x.example/2", "https://x.example/3"])
    c = _agent("c", ["https://y.example/1"])
    overlap = analyze_overlap([c, b, a])
    assert {p.agents: p.jaccard for p in overlap.pairs} == {
        ("a", "b"): pytest.approx(1 / 3),
        ("a", "c"): 0.0,
        ("b", "c"): 0.0,
    }
    assert overlap.average == pytest.approx(1 / 9)
    assert overlap.max == pytest.approx(1 / 3)
    assert overlap.total_unique_sources == 4
    assert overlap.band == "low"


@pytest.mark.parametrize(
    ("average", "band"),
    [
        (0.0, "low"),
        (0.19, "low"),
        (0.2, "moderate"),
        (0.39, "moderate"),
        (0.4, "high"),
        (0.59, "high"),
        (0.6, "very high"),
        (1.0, "very high"),
    ],
)
def test_overlap_bands(average: float, band: str) -> None:
    assert overlap_band(average) == band


def _merged_one_by_one(results: list[AgentResult]) -> list[MergedSource]:
    """The merge as its rule reads, one citation at a time (the seed's, made linear)."""
    best: dict[str, Any] = {}
    cited_by: dict[str, list[str]] = {}
    for result_ in sorted(results, key=lambda r: r.agent_id):
        for cited in result_.sources:
            url = normalize_url(cited.url)
            score = cited.relevance_score * cited.credibility_score
            if url not in best or score > best[url][0]:
                best[url] = (score, cited)
            citing = cited_by.setdefault(url, [])
            if result_.agent_id not in citing:
                citing.append(result_.agent_id)
    order = sorted(best, key=lambda url: (-best[url][0], url))
    return [
        MergedSource(
            url,
            best[url][1].title,
            best[url][1].category,
            best[url][1].credibility_score,
            best[url][1].relevance_score,
            best[url][1].published_at,
            tuple(cited_by[url]),
        )
        for url in order
    ]


_citations = st.lists(
    st.tuples(
        st.sampled_from(["https://a.example/1", "https://a.example/1/", "https://b.example/2"]),
        st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0]),
        st.sampled_from([0.0, 0.5, 1.0]),
        st.sampled_from(["", "first", "second"]),
    ),
    max_size=6,
)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(["c", "a", "b"]), _citations, max_size=3))
def test_merging_keeps_the_best_copy_and_every_citing_agent(
    citations: dict[str, list[tuple[str, float, float, str]]],
) -> None:
    """Repeated URLs (within an agent too), equal scores (the first copy kept) and zeros of
    both signs merge as one citation at a time would."""
    results = [
        AgentResult(
            agent_id=agent_id,
            outcome="YES",
            confidence=0.9,
            reasoning="",
            sources=tuple(
                ResearchSource(
                    url=url,
                    title=title,
                    category="news",
                    credibility_score=credibility,
                    relevance_score=relevance,
                )
                for url, credibility, relevance, title in cited
            ),
        )
        for agent_id, cited in citations.items()
    ]
    assert merge_sources(results) == _merged_one_by_one(results)
