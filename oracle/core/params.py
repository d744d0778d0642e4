"""The typed parameters the consensus core runs with, validated once, up front.

These models are embedded in the daemon's configuration (`consensus.*`, `sources.*`)
and copied verbatim into every proof, so a proof records the rules it was judged by.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from oracle.core.debate import ConflictResolution, DebateParams
from oracle.core.strategies import strategy_names

TWO_THIRDS = Fraction(2, 3)
# 0.67 is how people write "two thirds"; read literally it would make 2 of 3 fail.
_TWO_THIRDS_TOLERANCE = 0.005

UnitInterval = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class SourceThresholds(BaseModel):
    """Minimum evidence an agent must bring for its vote to count (`sources.*`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_total: int = Field(50, ge=1, description="Distinct source URLs per agent.")
    min_categories: int = Field(5, ge=1, description="Distinct source categories per agent.")
    min_official: int = Field(5, ge=0, description="Sources in the `official` category.")
    min_news: int = Field(15, ge=0, description="Sources in the `news` category.")


class ConsensusParams(BaseModel):
    """How agreement is judged and when a person must look (`consensus.*`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_agents: int = Field(3, ge=2, description="Valid agents needed before any verdict.")
    threshold: float = Field(
        0.67,
        allow_inf_nan=False,
        description="Share of valid agents that must agree; 0.67 means exactly two thirds.",
    )
    use_weighted_voting: bool = True
    min_confidence: UnitInterval = 0.5
    max_source_overlap: UnitInterval = 0.8
    agent_timeout: float = Field(300.0, gt=0, allow_inf_nan=False, description="Seconds.")
    min_model_families: int = Field(
        2,
        ge=1,
        description=(
            "Distinct model families the agents agreeing on a definite outcome must come from; "
            "an agent with no recorded family counts as a family of its own."
        ),
    )
    strategy: str = "bft-weighted"
    conflict_resolution: ConflictResolution = Field(
        ConflictResolution.ESCALATE,
        description=(
            "When the agents' independent answers conflict: escalate (a person decides), "
            "majority (a person decides, shown the weighted plurality as the proposed "
            "answer) or debate (critique and revision rounds, then the same policy)."
        ),
    )
    debate: DebateParams = DebateParams()

    @field_validator("threshold")
    @classmethod
    def _threshold_in_range(cls, value: float) -> float:
        if not 0.5 < value <= 1.0:
            raise ValueError(
                "must be between 0.5 and 1 (above one half, so two outcomes can never both pass)"
            )
        return value

    @field_validator("strategy")
    @classmethod
    def _strategy_known(cls, value: str) -> str:
        names = strategy_names()
        if value not in names:
            raise ValueError(f"unknown strategy {value!r}; known: {', '.join(sorted(names))}")
        return value

    @property
    def required_agreement(self) -> Fraction:
        """The threshold as an exact fraction: 2/3 for 0.67, else the decimal as written."""
        if abs(self.threshold - float(TWO_THIRDS)) <= _TWO_THIRDS_TOLERANCE:
            return TWO_THIRDS
        return Fraction(str(self.threshold))
