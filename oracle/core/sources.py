"""Evidence arithmetic: source quality, vote weight, merging and overlap.

Every function here is linear in the number of sources (merging adds one sort of the
de-duplicated list); the seed's merge was quadratic because it searched the merged
list for every repeated URL.

The verdict's own path (`oracle.core.consensus`) works on each source's fields as a plain
mapping (`ResearchSource`'s fields: a model's `vars`, or a document's validated source as
`oracle.core.inputs.read_consensus_input` gives it), with every URL's normalized form
looked up once: a large input has thousands of sources, and reading them as models, or
normalizing a URL once per use, cost more than the algorithm. The functions on
`ResearchSource` and `AgentResult` below are the same rules for callers holding models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations, repeat
from operator import itemgetter, mul
from typing import Any, NamedTuple

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

# A source's fields by name, as `ResearchSource` has them; one left at its default may be
# absent (`oracle.core.inputs.read_consensus_input` does not fill them in).
SourceFields = Mapping[str, Any]
# Sources' URLs, categories and credibility scores, each a list in the sources' order.
SourceColumns = tuple[list[str], list[str], list[float]]
_READ: bool = ResearchSource.model_fields["read"].default
_TITLE: str = ResearchSource.model_fields["title"].default
_URL = itemgetter("url")
_CATEGORY = itemgetter("category")
_CREDIBILITY = itemgetter("credibility_score")
_RELEVANCE = itemgetter("relevance_score")


class Evidence(NamedTuple):
    """What one agent's sources count for: those read, each normalized URL once (the first
    citation kept), with their normalized URLs in the same order; and the normalized URLs
    seen, not read (`seen_not_read`). (A named tuple: one is built per agent of every
    verdict.)"""

    sources: list[SourceFields]
    urls: list[str]
    url_set: set[str]  # `urls`, as a set
    categories: list[str]  # each source's, in order
    category_kinds: int  # distinct `categories`
    seen_not_read: tuple[str, ...]
    quality: float  # `source_quality` of `sources`


def evidence(
    sources: Sequence[SourceFields],
    normalized: Callable[[str], str] | None,
    columns: SourceColumns | None = None,
) -> Evidence:
    """`sources` (fields by name) as the verdict counts them; `normalized`: each URL's
    normalized form (`normalize_url`, or a lookup of it; None: every URL is its own);
    `columns`: the sources' URLs, categories and credibility scores, in order, when the
    caller has them and no source is unread (`read_consensus_input` gives them: three
    passes over the sources fewer)."""
    # By C calls over each list (`map` of an item getter) rather than a loop of lookups.
    urls = list(map(_URL, sources)) if columns is None else columns[0]
    if normalized is not None:
        urls = list(map(normalized, urls))
    unread: tuple[str, ...] = ()
    # (Dicts: a validated source holds `read` only when the document gave it; a model's
    # fields always do.)
    read = (
        [s.get("read", _READ) for s in sources]
        if columns is None and any(map(dict.__contains__, sources, repeat("read")))
        else None
    )
    kept, kept_urls, all_kept = list(sources), urls, True
    if read is not None and not all(read):
        all_kept = False
        kept = [s for s, r in zip(sources, read, strict=True) if r]
        kept_urls = [u for u, r in zip(urls, read, strict=True) if r]
        unread = tuple(sorted({u for u, r in zip(urls, read, strict=True) if not r} - {*kept_urls}))
    url_set = set(kept_urls)
    if len(url_set) != len(kept_urls):  # most agents repeat none
        all_kept = False
        first: dict[str, SourceFields] = {}
        for url, source in zip(kept_urls, kept, strict=True):
            first.setdefault(url, source)
        kept, kept_urls = list(first.values()), list(first)
    credibility = None
    if all_kept and columns is not None:  # the columns are the kept sources'
        categories, credibility = columns[1], columns[2]
    else:
        categories = list(map(_CATEGORY, kept))
    kinds = len(set(categories))
    quality = _quality(kept, credibility=credibility, kinds=kinds)
    return Evidence(kept, kept_urls, url_set, categories, kinds, unread, quality)


def _quality(
    sources: Sequence[SourceFields],
    *,
    credibility: Iterable[float] | None = None,
    kinds: int | None = None,
) -> float:
    """`source_quality`; `credibility`: the sources' scores, `kinds`: how many distinct
    categories they have, when the caller has them."""
    if not sources:
        return 0.0
    scores = map(_CREDIBILITY, sources) if credibility is None else credibility
    average_credibility: float = sum(scores) / len(sources)
    if kinds is None:
        kinds = len({s["category"] for s in sources})
    bonus = min(kinds * _DIVERSITY_BONUS_PER_CATEGORY, _DIVERSITY_BONUS_CAP)
    return min(average_credibility + bonus, 1.0)


def source_quality(sources: Sequence[ResearchSource]) -> float:
    """Average credibility plus a category-diversity bonus, capped at 1 (the seed's rule)."""
    return _quality([vars(s) for s in sources])


def vote_weight(
    confidence: float,
    sources: Sequence[ResearchSource] | Sequence[SourceFields],
    min_total: int,
    *,
    quality: float | None = None,
) -> float:
    """confidence x source_quality x min(sources / min_total, 1); `quality`: the sources'
    `source_quality`, when the caller has it already."""
    count_factor = min(len(sources) / min_total, 1.0)
    if quality is None:
        quality = _quality([s if isinstance(s, Mapping) else vars(s) for s in sources])
    return confidence * quality * count_factor


def merge_sources(results: Sequence[AgentResult]) -> list[MergedSource]:
    """De-duplicate by normalized URL; best-scored copy kept; `cited_by` in agent order.

    Sorted by relevance x credibility (highest first), ties by URL, so the list is
    the same whatever order the agents arrived in.
    """
    return merged(
        (
            r.agent_id,
            [vars(s) for s in r.sources],
            list(map(normalize_url, [s.url for s in r.sources])),
        )
        for r in results
    )


def merged(
    cited: Iterable[tuple[str, Sequence[SourceFields], Sequence[str]]],
) -> list[MergedSource]:
    """`merge_sources` of (agent id, its sources, their normalized URLs) triples."""
    # By URL: the best copy's score, that copy, the agents citing it (a tuple, most often
    # of one, shared by all the agent's URLs).
    best_score: dict[str, float] = {}
    best: dict[str, SourceFields] = {}
    citing_of: dict[str, tuple[str, ...]] = {}
    for agent_id, sources, urls in sorted(cited, key=lambda triple: triple[0]):
        # Each source's score worked out by C calls for the whole list (a third of the loop).
        scores = map(mul, map(_RELEVANCE, sources), map(_CREDIBILITY, sources))
        alone = (agent_id,)
        for url, source, score in zip(urls, sources, scores, strict=True):
            citing = citing_of.get(url)
            if citing is None:
                best_score[url], best[url], citing_of[url] = score, source, alone
                continue
            if score > best_score[url]:
                best_score[url], best[url] = score, source
            if citing[-1] != agent_id:
                citing_of[url] = citing + alone
    # By score, highest first, then by URL: sorted by URL, then (stably) by score. Two sorts
    # of plain strings then plain floats, each compared by a specialised routine, cost half
    # of one sort of (score, URL) pairs. (Scores are finite: `Score` refuses NaN.)
    order = sorted(best)
    order.sort(key=best_score.__getitem__, reverse=True)  # stable, reversed or not
    # Built from validated sources: the values are already what MergedSource holds.
    new = tuple.__new__
    return [
        new(
            MergedSource,
            (
                url,
                source.get("title", _TITLE),
                source["category"],
                source["credibility_score"],
                source["relevance_score"],
                source.get("published_at"),
                citing,
            ),
        )
        for url, source, citing in zip(
            order, map(best.__getitem__, order), map(citing_of.__getitem__, order), strict=True
        )
    ]


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
    return overlap(
        (result.agent_id, set(map(normalize_url, [s.url for s in result.sources])))
        for result in results
    )


def overlap(url_sets: Iterable[tuple[str, set[str]]]) -> SourceOverlap:
    """`analyze_overlap` of (agent id, its normalized URLs) pairs."""
    # Pair by pair in comprehensions over the combinations (21 pairs for 7 agents), the
    # pairs built as tuples: a loop doing the same cost a sixth more.
    ranked = sorted(url_sets, key=itemgetter(0))
    url_sets_ranked = [urls for _, urls in ranked]
    commons = [len(a & b) for a, b in combinations(url_sets_ranked, 2)]
    jaccards = [
        common / union if (union := size_a + size_b - common) else 0.0
        for common, (size_a, size_b) in zip(
            commons, combinations(map(len, url_sets_ranked), 2), strict=True
        )
    ]
    agents = combinations([agent_id for agent_id, _ in ranked], 2)
    pairs = tuple(map(tuple.__new__, repeat(OverlapPair), zip(agents, jaccards, strict=True)))
    average = sum(jaccards) / len(pairs) if pairs else 0.0
    return SourceOverlap(
        average=average,
        max=max(jaccards, default=0.0),
        pairs=pairs,
        total_unique_sources=len(set().union(*url_sets_ranked)),
        band=overlap_band(average),
    )
