"""A market as a venue reports it, before the daemon tracks it (its lifecycle is in
:mod:`oracle.core.lifecycle`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MarketSpec:
    """A market as a source reports it, before the daemon tracks it."""

    source: str
    external_id: str
    question: str
    resolve_after: float
    criteria: str = ""
    outcomes: tuple[str, ...] = ("YES", "NO")
    details: dict[str, Any] = field(default_factory=dict)
    awaits_settlement: bool = False  # someone waits for the final answer to be pushed

    @property
    def market_id(self) -> str:
        return f"{self.source}:{self.external_id}"
