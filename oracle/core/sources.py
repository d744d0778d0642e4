"""Evidence arithmetic: source quality, vote weight, merging and overlap.

Every function here is linear in the number of sources (merging adds one sort of the
de-duplicated list); the seed's merge was quadratic because it searched the merged
list for every repeated URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from itertools import combinations

from pydantic import TypeAdapter

from oracle.core.models import (
    AgentResult,
    MergedSource,
    OverlapBand,
    OverlapPair,
    ResearchSource,
    SourceOverlap,
)
from oracle.core.urls import normalize_url

# Each distinct category adds 0.04 to quality, capped at 0.2 (reached at 5 categories).
_DIVERSITY_BONUS_PER_CATEGORY = 1 / 25
_DIVERSITY_BONUS_CAP = 0.2


def distinct_sources(sources: Iterable[ResearchSource]) -> list[ResearchSource]:
    """An agent's sources with repeated URLs (after normalization) counted once."""
    sources = list(sources)
    urls = list(map(normalize_url, [s.url for s in sources]))
    if len(dict.fromkeys(urls)) == len(urls):  # most agents repeat none
        return sources
    by_url: dict[str, ResearchSource] = {}
    for url, source in zip(urls, sources, strict=True):
        by_url.setdefault(url, source)
    return list(by_url.values())


def seen_not_read(sources: Iterable[ResearchSource]) -> tuple[str, ...]:
    """The normalized URLs among `sources` that were seen, not read (and not read under
    another citation of the same URL), sorted: shown to a person, counted for nothing."""
    sources = list(sources)
    unread = [s.url for s in sources if not s.read]
    if not unread:
        return ()
    read = set(map(normalize_url, [s.url for s in sources if s.read]))
    return tuple(sorted(set(map(normalize_url, unread)) - read))


def source_quality(sources: Sequence[ResearchSource]) -> float:
    """Average credibility plus a category-diversity bonus, capped at 1 (the seed's rule)."""
    if not sources:
        return 0.0
    average_credibility = sum([s.credibility_score for s in sources]) / len(sources)
    categories = {s.category for s in sources}
    bonus = min(len(categories) * _DIVERSITY_BONUS_PER_CATEGORY, _DIVERSITY_BONUS_CAP)
    return min(average_credibility + bonus, 1.0)


def vote_weight(
    confidence: float,
    sources: Sequence[ResearchSource],
    min_total: int,
    *,
    quality: float | None = None,
) -> float:
    """confidence x source_quality x min(sources / min_total, 1); `quality`: the sources'
    `source_quality`, when the caller has it already."""
    count_factor = min(len(sources) / min_total, 1.0)
    if quality is None:
        quality = source_quality(sources)
    return confidence * quality * count_factor


def merge_sources(results: Sequence[AgentResult]) -> list[MergedSource]:
    """De-duplicate by normalized URL; best-scored copy kept; `cited_by` in agent order.

    Sorted by relevance x credibility (highest first), ties by URL, so the list is
    the same whatever order the agents arrived in.
    """
    best_score: dict[str, float] = {}
    best: dict[str, ResearchSource] = {}
    cited_by: dict[str, list[str]] = {}
    for result in sorted(results, key=lambda r: r.agent_id):
        agent_id = result.agent_id
        sources = result.sources
        urls = map(normalize_url, [s.url for s in sources])
        scores = [s.relevance_score * s.credibility_score for s in sources]
        for url, score, source in zip(urls, scores, sources, strict=True):
            current = best_score.get(url)
            if current is None:
                best_score[url] = score
                best[url] = source
                cited_by[url] = [agent_id]
                continue
            if score > current:
                best_score[url] = score
                best[url] = source
            citing = cited_by[url]
            if citing[-1] != agent_id:
                citing.append(agent_id)
    # URLs are distinct, so the pairs' order is the score's, then the URL's.
    order = sorted([(-score, url) for url, score in best_score.items()])
    # One validation of the whole list (the same as each MergedSource(...)), not one call each.
    return _merged_sources_adapter().validate_python(
        [
            {
                "url": url,
                "title": source.title,
                "category": source.category,
                "credibility_score": source.credibility_score,
                "relevance_score": source.relevance_score,
                "published_at": source.published_at,
                "cited_by": tuple(cited_by[url]),
            }
            for _, url in order
            for source in (best[url],)
        ]
    )


@cache
def _merged_sources_adapter() -> TypeAdapter[list[MergedSource]]:
    return TypeAdapter(list[MergedSource])


def overlap_band(average: float) -> OverlapBand:
    """The seed's interpretation of average pairwise overlap."""
    if average < 0.2:
        return "low"  # agents found very different sources
    if average < 0.4:
        return "moderate"  # good diversity with some common sources
    if average < 0.6:
        return "high"  # agents found many of the same sources
    return "very high"  # possibly limited source availability


def analyze_overlap(results: Sequence[AgentResult]) -> SourceOverlap:
    """Pairwise Jaccard similarity of the agents' normalized URL sets."""
    url_sets = {
        result.agent_id: set(map(normalize_url, [s.url for s in result.sources]))
        for result in sorted(results, key=lambda r: r.agent_id)
    }
    pairs = []
    for (agent_a, urls_a), (agent_b, urls_b) in combinations(url_sets.items(), 2):
        common = len(urls_a & urls_b)
        union = len(urls_a) + len(urls_b) - common
        jaccard = common / union if union else 0.0
        pairs.append(OverlapPair(agents=(agent_a, agent_b), jaccard=jaccard))
    average = sum(p.jaccard for p in pairs) / len(pairs) if pairs else 0.0
    unique: set[str] = set().union(*url_sets.values()) if url_sets else set()
    return SourceOverlap(
        average=average,
        max=max((p.jaccard for p in pairs), default=0.0),
        pairs=tuple(pairs),
        total_unique_sources=len(unique),
        band=overlap_band(average),
    )
