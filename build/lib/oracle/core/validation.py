"""Per-agent evidence checks against the source thresholds (`sources.*`)."""

from __future__ import annotations

from collections.abc import Sequence

from oracle.core.models import NEWS, OFFICIAL, ResearchSource
from oracle.core.params import SourceThresholds


def evidence_shortfalls(
    sources: Sequence[ResearchSource], thresholds: SourceThresholds
) -> list[str]:
    """Every way the agent's (already de-duplicated) sources fall short; empty when valid."""
    reasons = []
    total = len(sources)
    if total < thresholds.min_total:
        reasons.append(f"only {total} distinct sources, need {thresholds.min_total}")
    categories = {s.category for s in sources}
    if len(categories) < thresholds.min_categories:
        reasons.append(
            f"only {len(categories)} source categories, need {thresholds.min_categories}"
        )
    official = sum(1 for s in sources if s.category == OFFICIAL)
    if official < thresholds.min_official:
        reasons.append(f"only {official} official sources, need {thresholds.min_official}")
    news = sum(1 for s in sources if s.category == NEWS)
    if news < thresholds.min_news:
        reasons.append(f"only {news} news sources, need {thresholds.min_news}")
    return reasons
