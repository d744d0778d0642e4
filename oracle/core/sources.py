"""Evidence arithmetic: source quality, vote weight, merging and overlap.

Every function here is linear in the number of sources (merging adds one sort of the
de-duplicated list); the seed's merge was quadratic because it searched the merged
list for every repeated URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

from oracle.core.models import (
    AgentResult,
    MergedSource,
    OverlapBand,
    OverlapPair,
    ResearchSource,
    SourceOverlap,
)

# Each distinct category adds 0.04 to quality, capped at 0.2 (reached at 5 categories).
_DIVERSITY_BONUS_PER_CATEGORY = 1 / 25
_DIVERSITY_BONUS_CAP = 0.2


def distinct_sources(sources: Iterable[ResearchSource]) -> list[ResearchSource]:
    """An agent's sources with repeated URLs (after normalization) counted once."""
    by_url: dict[str, ResearchSource] = {}
    for source in sources:
        by_url.setdefault(source.normalized_url, source)
    return list(by_url.values())


def seen_not_read(sources: Iterable[ResearchSource]) -> tuple[str, ...]:
    """The normalized URLs among `sources` that were seen, not read (and not read under
    another citation of the same URL), sorted: shown to a person, counted for nothing."""
    read = {s.normalized_url for s in sources if s.read}
    return tuple(sorted({s.normalized_url for s in sources if not s.read} - read))


def source_quality(sources: Sequence[ResearchSource]) -> float:
    """Average credibility plus a category-diversity bonus, capped at 1 (the seed's rule)."""
    if not sources:
        return 0.0
    average_credibility = sum(s.credibility_score for s in sources) / len(sources)
    categories = {s.category for s in sources}
    bonus = min(len(categories) * _DIVERSITY_BONUS_PER_CATEGORY, _DIVERSITY_BONUS_CAP)
    return min(average_credibility + bonus, 1.0)


def vote_weight(confidence: float, sources: Sequence[ResearchSource], min_total: int) -> float:
    """confidence x source_quality x min(sources / min_total, 1)."""
    count_factor = min(len(sources) / min_total, 1.0)
    return confidence * source_quality(sources) * count_factor


def merge_sources(results: Sequence[AgentResult]) -> list[MergedSource]:
    """De-duplicate by normalized URL; best-scored copy kept; `cited_by` in agent order.

    Sorted by relevance x credibility (highest first), ties by URL, so the list is
    the same whatever order the agents arrived in.
    """
    best: dict[str, ResearchSource] = {}
    cited_by: dict[str, list[str]] = {}
    for result in sorted(results, key=lambda r: r.agent_id):
        for source in result.sources:
            url = source.normalized_url
            current = best.get(url)
            if current is None:
                best[url] = source
                cited_by[url] = [result.agent_id]
                continue
            if _score(source) > _score(current):
                best[url] = source
            if cited_by[url][-1] != result.agent_id:
                cited_by[url].append(result.agent_id)
    merged = [
        MergedSource(
            url=url,
            title=source.title,
            category=source.category,
            credibility_score=source.credibility_score,
            relevance_score=source.relevance_score,
            published_at=source.published_at,
            cited_by=tuple(cited_by[url]),
        )
        for url, source in best.items()
    ]
    merged.sort(key=lambda s: (-s.relevance_score * s.credibility_score, s.url))
    return merged


def _score(source: ResearchSource) -> float:
    return source.relevance_score * source.credibility_score


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
        result.agent_id: {s.normalized_url for s in result.sources}
        for result in sorted(results, key=lambda r: r.agent_id)
    }
    pairs = []
    for (agent_a, urls_a), (agent_b, urls_b) in combinations(url_sets.items(), 2):
        union = len(urls_a) + len(urls_b) - len(urls_a & urls_b)
        jaccard = len(urls_a & urls_b) / union if union else 0.0
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
