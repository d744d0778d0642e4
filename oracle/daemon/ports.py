"""Where the daemon meets the outside world: market sources and resolvers.

Contracts:

:class:`MarketSource`
    `start()` connects and checks the source's setup; the daemon calls it once, before
    its first job (a repeated call is harmless). A setup that cannot work (a node on
    another chain, a key that does not unlock) is a `SetupError` naming the setting, and
    `oracle run` refuses to start; another failure raises :class:`SourceError`.
    `poll(deliver)` hands the markets the source knows now (new or not; the store keeps
    the first report and ignores repeats) to `deliver`, which stores them, and returns
    one line per malformed market it skipped (a bad market never hides the rest). A
    source that keeps a position (a block checkpoint) advances it only after `deliver`
    returned, so a crash in between repeats markets rather than losing them. It raises
    :class:`SourceError` on a transport failure.

:class:`Resolver`
    Where a market's answer goes (the oracle contract, or an off-chain venue's webhook).
    `start()` connects, checks the setup and resumes what a previous process left in
    flight (for a chain: the transactions it recorded), before the daemon's first job,
    whichever replica then runs which job; it raises `SetupError` as `start()` above, or
    :class:`ResolverError`.
    `propose` is idempotent: called again for the same market after a crash, it must not
    send a second answer; it returns once the answer is accepted (for a chain: included
    at the configured confirmation depth) or raises :class:`ResolverError`. `state`
    reports what the outlet says about the market now. `settle` pushes a final answer to
    whoever waits for it; calling it twice is harmless.

:class:`Challenger`
    A resolver that can answer back against someone else's answer a person confirmed
    (a UMA dispute, a Reality.eth counter-answer): `challenge(market, outcome)` re-reads
    the venue first and sends nothing when the answer can no longer be challenged (already
    disputed, settled, expired, or the standing answer is the decided one): `Challenged`
    with `sent` None and why. It is idempotent as `propose` is (one intent per challenge,
    across crashes), returns once the transaction is included, or raises ResolverError.
    A receipt's `challenge` names what confirming its disagreement will do ("dispute",
    "counter_answer" beside a `submitted` answer; "defend" for a `disputed` market whose
    own answer was superseded, offered by `state` in a DISPUTED resolution's receipt).

:class:`Refreshing`
    A source whose markets can change after discovery in a way the research must see (a
    UMA question's clarifications, posted on a bulletin board at any time):
    `refresh(market)` reads the venue again and returns the market's criteria and details
    as discovery would make them now (None: nothing to read again). The daemon calls it
    right before each research of the market (the first, a research-again, one a person
    sent back, a resumed one), and stores what it returns with the research's answers, so
    the proof shows what the agents were given. It must make them the way discovery does
    (one code path). A transport failure raises :class:`SourceError`: that research
    attempt fails as a failed research does (`failed_retry`, retried with back-off by the
    `promote` job, handed to a person once `daemon.max_attempts` is spent); the market
    is never lost nor researched on stale text.

:class:`VenueReview`
    A source that can say, from a market's details alone (pure, no I/O), why a person must
    look before its verdict goes out (a clarification board that could not be read):
    `review_reasons(market)`. The daemon adds them to the decision policy's reasons
    (`oracle.core.decision.with_venue_reasons`), so such a verdict is reviewed, never
    submitted on the daemon's own; they show in the review item and the proof, and count
    in `oracle_review_reasons_total` under their code. A person's decision still goes out.

:class:`InvalidAnswers`
    A venue that takes INVALID as an answer (UMA's 50-50 price where the question offers
    it, Reality.eth's `0xff…ff`): `invalid_policy(market)` says, from the market's
    details and the source's `invalid` setting alone (pure, no I/O), whether the agents
    may answer INVALID on it (None: they may not) and what an agreed INVALID does there
    (`propose` it as any verdict the policy lets through, or `review`: a person first).
    The daemon puts it in the market the agents research and the consensus judges
    (`oracle.core.models.Market.invalid`), so the agents' prompts and the proof carry it.

:class:`VenueClock`
    A venue whose rules run on a clock of its own (a chain's block time) says what that
    clock shows now; the daemon judges a market due, and a challenge window over, by it.
    Venues without one are judged by the daemon's clock.

:class:`AnsweredByOthers`
    A venue where other parties answer and dispute too (a UMA proposer, a Reality.eth
    answerer): `answered_by_others()` returns the external ids of its markets on which
    someone other than this daemon's signer proposed, answered, disputed or asked for
    arbitration since the last call, from the venue's events (each reported once, in any
    order; ids of markets the daemon does not track may be among them). It never sends
    anything. The daemon calls it after each poll of the source: it researches those
    markets still waiting for their research at once (the second opinion:
    `oracle.core.timing.ScheduleEvent.OTHER_ANSWERED`) and reads the state of those it
    answered at once (a dispute is known within a poll), and it reads such a venue's
    answers otherwise only once their challenge window is over. A crash between the call
    and its use may lose a report: the market is then researched at its scheduled time,
    or its dispute seen when its window ends, never lost. A transport failure raises
    :class:`SourceError`; the daemon counts it like a failed poll.

:class:`Monitored`
    A source or resolver that can tell, without I/O, whether it reaches its venue now:
    `health()` is None when it does, else why not (shown by `/readyz` and the metrics).

:class:`Funded`
    A venue whose answers are paid for by a signer's account (a chain): `signer_balance()`
    reads what that account holds now, None while the venue is not connected (reading it
    never connects), ResolverError when it cannot be read. The `housekeep` job reports it.

:class:`WindowReader`
    Reads a market's answer window where neither its venue nor its words (the
    deterministic reader, `oracle.core.timetext`) say when it can be answered (a model:
    `oracle.agents.window.ModelWindowReader`, wired from `daemon.window_model`).
    `read(question, criteria, outcomes, asked_at, market_id=...)` returns the window
    (origin `model`), or None when it finds none it can vouch for; it never raises (a
    failure is None, counted and logged by the reader). The daemon calls it at most once
    per market, when the market is new, before storing it; `market_id` is for its logs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from oracle.core.decision import ReviewReason
from oracle.core.markets import MarketSpec
from oracle.core.outcomes import InvalidPolicy
from oracle.core.scoring import Finality
from oracle.core.timing import AnswerWindow


class ResolutionStatus(StrEnum):
    OPEN = "open"  # asked, no answer yet
    PROPOSED = "proposed"  # answered, challenge window running
    DISPUTED = "disputed"  # challenged, waiting for the arbiter
    FINAL = "final"  # settled for good
    RESET = "reset"  # the arbiter sent it back for a new answer


@dataclass(frozen=True)
class MarketRef:
    """What a resolver needs to know about a market."""

    market_id: str
    source: str
    external_id: str
    outcomes: tuple[str, ...]
    details: dict[str, Any]  # what the source reported (for a chain: question id, ...)
    submission: dict[str, Any] = field(default_factory=dict)  # what the resolver returned


@dataclass(frozen=True)
class Receipt:
    """An accepted answer: where it went and when it can become final."""

    reference: str  # transaction hash, or the venue's acknowledgement
    final_after: float  # epoch seconds; the end of the challenge window
    gas_used: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    # The venue already carries someone else's answer that contradicts ours (ours was not
    # sent): what a person should look at. The daemon opens a review item with it.
    disagreement: str | None = None
    # What a person confirming that disagreement makes the venue do ("dispute",
    # "counter_answer"); None: the venue only shows it (its setting is `never`).
    challenge: str | None = None


class ChallengeSent(StrEnum):
    DISPUTED = "disputed"  # our dispute stands: the venue's arbiter decides
    ANSWERED = "answered"  # our counter-answer stands, followed as our answer


@dataclass(frozen=True)
class Challenged:
    """What came of a challenge: `sent` None when nothing was sent (`reason` says why);
    `receipt` where it went (for a counter-answer, the answer that now stands)."""

    sent: ChallengeSent | None
    reason: str
    receipt: Receipt | None = None


@dataclass(frozen=True)
class Resolution:
    """What a venue says about a market now. Once FINAL: `outcome` the venue settled on
    (None: the answer given stood) and `finality`, how it became final (an
    `oracle.core.scoring.Finality`; None: the daemon infers it, by time when the window
    passed, by the arbiter after a dispute)."""

    status: ResolutionStatus
    outcome: str | None = None
    final_after: float | None = None
    finality: Finality | None = None
    # Why the venue reports this status, in the venue's words (the audit log records it
    # with the transition; None: the daemon's own wording).
    reason: str | None = None
    # DISPUTED because another answer superseded ours, and a person may answer back: the
    # venue as it now stands, recorded as the market's submission, with the disagreement
    # a review item shows and what confirming it does (its `challenge`).
    receipt: Receipt | None = None


@dataclass(frozen=True)
class PollResult:
    markets: list[MarketSpec]
    skipped: list[str] = field(default_factory=list)  # one line per malformed market


Deliver = Callable[[list[MarketSpec]], Awaitable[None]]


class MarketSource(Protocol):
    name: str

    async def start(self) -> None: ...

    async def poll(self, deliver: Deliver) -> list[str]: ...

    async def aclose(self) -> None: ...


class Resolver(Protocol):
    async def start(self) -> None: ...

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt: ...

    async def state(self, market: MarketRef) -> Resolution: ...

    async def settle(self, market: MarketRef) -> str | None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Challenger(Protocol):
    async def challenge(self, market: MarketRef, outcome: str) -> Challenged: ...


@dataclass(frozen=True)
class Refreshed:
    """A market's criteria and details as its source reads them now."""

    criteria: str
    details: dict[str, Any]


@runtime_checkable
class Refreshing(Protocol):
    async def refresh(self, market: MarketRef) -> Refreshed | None: ...


@runtime_checkable
class VenueReview(Protocol):
    def review_reasons(self, market: MarketRef) -> list[ReviewReason]: ...


@runtime_checkable
class InvalidAnswers(Protocol):
    def invalid_policy(self, market: MarketRef) -> InvalidPolicy | None: ...


@runtime_checkable
class VenueClock(Protocol):
    async def now(self) -> float:
        """Epoch seconds on the venue's own clock (for a chain: its latest block's time)."""
        ...


@runtime_checkable
class AnsweredByOthers(Protocol):
    async def answered_by_others(self) -> list[str]: ...


@runtime_checkable
class Monitored(Protocol):
    def health(self) -> str | None: ...


@dataclass(frozen=True)
class SignerBalance:
    signer: str  # the account's public address
    wei: int  # of the chain's native token


@runtime_checkable
class Funded(Protocol):
    name: str

    async def signer_balance(self) -> SignerBalance | None: ...


class WindowReader(Protocol):
    async def read(
        self,
        question: str,
        criteria: str,
        outcomes: tuple[str, ...],
        asked_at: float,
        *,
        market_id: str = "",
    ) -> AnswerWindow | None: ...
