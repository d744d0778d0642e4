"""The consensus core's data: markets, sources, agent answers and verdicts.

Outcomes are plain strings. A binary market's outcomes are `YES` and `NO`; a
categorical market names its own. Any agent may also answer `UNDETERMINED`
(the event cannot be decided yet); `INVALID` (the question has no answer by its own
terms) is open to the agents only where the market's venue takes it (`Market.invalid`),
and the consensus itself produces it when too few trustworthy answers remain to decide
anything (`oracle.core.outcomes` says more).

A value market (`Market.values`, `oracle.core.values`) is answered by a value (a number, a
time, a set of its outcomes) written as text: its one canonical spelling is the outcome,
so agents who gave equal values agree (`Market.admits`, `Market.candidates`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal, NamedTuple, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    field_validator,
    model_validator,
)
from pydantic_core import core_schema
from typing_extensions import TypedDict

from oracle.core import outcomes as _outcomes
from oracle.core.outcomes import InvalidPolicy
from oracle.core.timing import AnswerWindow
from oracle.core.urls import normalize_url
from oracle.core.values import ValueFormat, canonical_value

# The shared names (`oracle.core.outcomes`), here too where they were first defined.
YES = _outcomes.YES
NO = _outcomes.NO
UNDETERMINED = _outcomes.UNDETERMINED
INVALID = _outcomes.INVALID
BINARY_OUTCOMES = _outcomes.BINARY_OUTCOMES
RESERVED_OUTCOMES = _outcomes.RESERVED_OUTCOMES

# Source categories the thresholds count by name; any other non-empty category is allowed.
OFFICIAL = "official"
NEWS = "news"
# Further categories the built-in classification rules use.
ACADEMIC = "academic"
DATA = "data"
REFERENCE = "reference"
SOCIAL = "social"
WEB = "web"

# The longest quote a source may hold, in characters.
QUOTE_MAX_CHARS = 2000

Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
NonEmpty = Annotated[str, Field(min_length=1)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Market(_Frozen):
    """A question to resolve, with the outcomes an answer may take."""

    id: NonEmpty
    question: NonEmpty
    criteria: str = ""
    outcomes: tuple[str, ...] = BINARY_OUTCOMES
    resolve_after: float | None = Field(
        None, description="Epoch seconds after which the event should have happened."
    )
    window: AnswerWindow | None = Field(
        None, description="When each outcome becomes final, and what said so."
    )
    now: float | None = Field(
        None,
        allow_inf_nan=False,
        description="The venue's clock when this research began: the agents' present.",
    )
    invalid: InvalidPolicy | None = Field(
        None,
        description=(
            "Whether the venue takes INVALID as an answer (None: it does not), and what "
            "an agreed INVALID does there: propose it, or go to a person first."
        ),
    )
    values: ValueFormat | None = Field(
        None,
        description="A value market's format (number, datetime, or a set of the outcomes); "
        "None: answered by one outcome label.",
    )

    @field_validator("outcomes")
    @classmethod
    def _outcomes_valid(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > 256:
            raise ValueError("a market has at most 256 outcomes")
        if len(set(value)) != len(value):
            raise ValueError("outcome names must be unique")
        for name in value:
            if not name.strip():
                raise ValueError("outcome names must not be empty")
            if name in RESERVED_OUTCOMES:
                raise ValueError(f"{name} is reserved and cannot be a market outcome")
        return value

    @model_validator(mode="after")
    def _enough_outcomes(self) -> Market:
        # A number or a time needs no labels (it may list venue words such as TOO_EARLY);
        # a set is chosen among at least two options, a label among at least two.
        if (self.values is None or self.values.kind == "set") and len(self.outcomes) < 2:
            raise ValueError("outcomes: a market needs at least two outcomes")
        return self

    @property
    def answerable(self) -> tuple[str, ...]:
        """Labels an agent may vote for: the market's own (a value market's options are
        not answers by themselves: its values are, `admits`), INVALID where the venue takes
        it, and UNDETERMINED."""
        own = () if self.values is not None and self.values.kind == "set" else self.outcomes
        invalid = (INVALID,) if self.invalid is not None else ()
        return (*own, *invalid, UNDETERMINED)

    def canonical(self, outcome: str) -> str | None:
        """`outcome` as this market's answer: a label as listed, a value in its canonical
        spelling; None when it is neither."""
        if outcome in self.answerable:
            return outcome
        if self.values is None:
            return None
        try:
            return canonical_value(self.values, outcome, self.outcomes)
        except ValueError:
            return None

    def admits(self, outcome: str) -> bool:
        """Whether an agent's answer may be `outcome` exactly: a label it may vote for, or
        a value in its canonical spelling (equal values are one answer)."""
        return self.canonical(outcome) == outcome

    def candidates(self, voted: Sequence[str]) -> tuple[str, ...]:
        """What a verdict chooses among: the answerable labels, then each value voted, in
        the order first voted (a value market has no fixed list)."""
        answerable = self.answerable
        extra = [o for o in dict.fromkeys(voted) if o not in answerable]
        return (*answerable, *extra)


class ResearchSource(_Frozen):
    """One piece of evidence an agent relied on."""

    url: NonEmpty
    title: str = ""
    category: NonEmpty
    credibility_score: Score
    relevance_score: Score
    published_at: datetime | None = None
    # The words on the page the agent relied on (untrusted: shown escaped, as quoted).
    quote: str = Field("", max_length=QUOTE_MAX_CHARS)
    # Read: the agent opened the page in that research and its quote is in the text it
    # was shown (`oracle.core.evidence`). A source seen only (a search hit never opened, a
    # quote not found) is kept for a person to see and counts for nothing. Recordings and
    # sources before this field are taken as read.
    read: bool = True

    @field_validator("url")
    @classmethod
    def _url_absolute(cls, value: str) -> str:
        normalize_url(value)  # raises ValueError naming the problem
        return value

    @field_validator("category")
    @classmethod
    def _category_lowercase(cls, value: str) -> str:
        value = value.strip().lower()
        if not value:
            raise ValueError("must not be empty")
        return value

    @property
    def normalized_url(self) -> str:
        return normalize_url(self.url)


class AgentResult(_Frozen):
    """One agent's answer to a market."""

    agent_id: NonEmpty
    outcome: NonEmpty
    confidence: Score
    reasoning: str
    sources: tuple[ResearchSource, ...]
    provider: str | None = None
    model_family: str | None = None


class AgentFailure(_Frozen):
    """An agent that produced no usable answer, and why."""

    agent_id: NonEmpty
    error: str


class ConsensusInput(_Frozen):
    """Everything a verdict is computed from."""

    market: Market
    results: tuple[AgentResult, ...]
    failures: tuple[AgentFailure, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> ConsensusInput:
        seen: set[str] = set()
        for kind, ids in (
            ("results", [r.agent_id for r in self.results]),
            ("failures", [f.agent_id for f in self.failures]),
        ):
            for index, agent_id in enumerate(ids):
                if agent_id in seen:
                    raise ValueError(f"{kind}[{index}].agent_id: duplicate agent id {agent_id!r}")
                seen.add(agent_id)
        allowed = self.market.answerable
        for index, result in enumerate(self.results):
            if result.outcome not in allowed and not self.market.admits(result.outcome):
                expected = f"one of {', '.join(allowed)}"
                if self.market.values is not None:
                    expected += f", or a {self.market.values.kind} in its canonical spelling"
                raise ValueError(
                    f"results[{index}].outcome: unknown outcome {result.outcome!r}; "
                    f"expected {expected}"
                )
        return self


_Tuple = TypeVar("_Tuple", bound=tuple[Any, ...])


def _built_by_the_core(cls: type[_Tuple]) -> type[_Tuple]:
    """A named tuple the engine builds from values it has validated already (a verdict's
    votes, exclusions, dissents, tensions, overlap pairs and merged sources): in a model it
    is taken as it is, not validated again (building a model for each cost a small verdict
    more than its arithmetic), and it is written as an object of its fields, as a model
    would be."""

    def schema(
        named: type[Any], source: type[Any], handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        fields: Any = TypedDict(f"{named.__name__}Fields", named.__annotations__)  # type: ignore[misc]
        return core_schema.is_instance_schema(
            named,
            serialization=core_schema.plain_serializer_function_ser_schema(
                named._asdict, return_schema=handler.generate_schema(fields)
            ),
        )

    setattr(cls, "__get_pydantic_core_schema__", classmethod(schema))  # noqa: B010
    return cls


@_built_by_the_core
class Vote(NamedTuple):
    """How one agent's answer entered the verdict.

    A named tuple, as `MergedSource`: built only by the engine, from values already
    validated, one per agent of every verdict (`_built_by_the_core`)."""

    agent_id: str
    outcome: str
    confidence: float
    weight: float
    source_quality: float
    source_count: int
    counted: bool
    excluded_reasons: tuple[str, ...] = ()
    # Normalized URLs the agent cited but did not read (seen, not read): shown, not counted.
    seen_not_read: tuple[str, ...] = ()


@_built_by_the_core
class ExcludedAgent(NamedTuple):
    """An agent whose answer did not count, with every reason (built by the engine)."""

    agent_id: str
    reasons: tuple[str, ...]


@_built_by_the_core
class MergedSource(NamedTuple):
    """A source after de-duplication by normalized URL, with the agents that cited it.

    A named tuple, not a model: built only from sources already validated (a large input
    merges thousands, and validating each again cost as much as the merge itself)."""

    url: str
    title: str
    category: str
    credibility_score: float
    relevance_score: float
    published_at: datetime | None = None
    cited_by: tuple[str, ...] = ()


@_built_by_the_core
class OverlapPair(NamedTuple):
    """Two agents' overlap: a named tuple, as `MergedSource` (21 in every 7-agent verdict)."""

    agents: tuple[str, str]
    jaccard: float


OverlapBand = Literal["low", "moderate", "high", "very high"]


class SourceOverlap(_Frozen):
    """How much the agents' evidence overlaps (pairwise Jaccard on normalized URLs)."""

    average: float
    max: float
    pairs: tuple[OverlapPair, ...]
    total_unique_sources: int
    band: OverlapBand


AgreementLevel = Literal["unanimous", "majority", "contested"]
Action = Literal["submit", "review", "research_again"]


@_built_by_the_core
class Dissent(NamedTuple):
    """An agent that voted against the consensus, kept with its reasoning (built by the
    engine)."""

    agent_id: str
    outcome: str
    confidence: float
    kind: Literal["full", "partial"]
    reasoning: str


@_built_by_the_core
class Tension(NamedTuple):
    """An unresolved disagreement a reviewer should know about (built by the engine)."""

    description: str
    agents_involved: tuple[str, ...]
    options: tuple[str, ...]
    impact: str
    suggested_followup: str


class ConsensusResult(_Frozen):
    """The verdict on a market, with the decision policy applied.

    `reached` says only whether the quorum agreed; whether the answer may go on-chain
    without a person is `requires_human_review` (and `action`), with every reason listed.
    """

    market_id: str
    strategy: str
    reached: bool
    outcome: str
    leading_outcome: str | None
    confidence: float
    agreement_ratio: float
    weighted_ratio: float
    strategy_score: float
    required_agreement: float
    required_agreement_fraction: str
    valid_agents: int
    fault_tolerance: int
    agreement_level: AgreementLevel
    requires_human_review: bool
    review_reasons: tuple[str, ...]
    review_codes: tuple[str, ...]
    action: Action
    explanation: str
    votes: tuple[Vote, ...]
    excluded: tuple[ExcludedAgent, ...]
    failures: tuple[AgentFailure, ...]
    dissent: tuple[Dissent, ...]
    tensions: tuple[Tension, ...]
    blind_spots: tuple[str, ...]
    overlap: SourceOverlap
    sources: tuple[MergedSource, ...]
