"""Per-agent evidence checks against the source thresholds (`sources.*`)."""

from __future__ import annotations

from collections.abc import Sequence

from oracle.core.models import NEWS, OFFICIAL, ResearchSource
from oracle.core.params import SourceThresholds


def evidence_shortfalls(
    sources: Sequence[ResearchSource], thresholds: SourceThresholds
) -> list[str]:
    """Every way the agent's (already de-duplicated) sources fall short; empty when valid."""
    return category_shortfalls([s.category for s in sources], thresholds)


def category_shortfalls(
    categories: Sequence[str], thresholds: SourceThresholds, kinds: int | None = None
) -> list[str]:
    """`evidence_shortfalls` of sources with these categories, one per source; `kinds`:
    how many distinct categories they are, when the caller has counted them."""
    reasons = []
    total = len(categories)
    if total < thresholds.min_total:
        reasons.append(f"only {total} distinct sources, need {thresholds.min_total}")
    # Only two categories are counted: a set and two C counts cost less than a Counter.
    distinct = len(set(categories)) if kinds is None else kinds
    if distinct < thresholds.min_categories:
        reasons.append(f"only {distinct} source categories, need {thresholds.min_categories}")
    official = categories.count(OFFICIAL)
    if official < thresholds.min_official:
        reasons.append(f"only {official} official sources, need {thresholds.min_official}")
    news = categories.count(NEWS)
    if news < thresholds.min_news:
        reasons.append(f"only {news} news sources, need {thresholds.min_news}")
    return reasons
