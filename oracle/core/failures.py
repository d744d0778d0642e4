"""What a failed delivery leads to: retried later, or handed to a person. Pure, no I/O.

A delivery (a proposal, a webhook answer, a dispute or counter-answer a person confirmed)
fails in one of two ways (`FailureKind`):

* **permanent**: trying again cannot help. The venue refused the answer for a reason
  waiting will not cure: the signer is off a proposer whitelist, the HTTP venue answered
  4xx (not 408, 425 or 429), the contract reverts with an error that names a standing
  condition (a missing role, an outcome it does not offer, a request in another state).
  The market goes to a person at once, after that one attempt, with the reason.
* **transient**: it may pass (a node down, a 5xx, a bond cap that frees up, a revert
  nobody knows). It is retried after `backoff_delay(n)`: `retry_backoff` doubled per
  failed attempt, at most `retry_backoff_max`; the `max_attempts`-th failed attempt
  goes to a person instead. There is no third way: every failure either waits longer
  than the one before or stops, so a refusal is never retried at a constant interval.

`after_failure(kind, failed_before, now, policy)` is the whole rule; `classify_status`
and `classify_revert` say which kind an HTTP status or a contract's revert is, and
`review_reason` is the sentence a person reads (the venue's reason escaped: it may be
anyone's text).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import StrEnum

from oracle.core.text import visible

# The longest share of a venue's reason a review item quotes (the rest is cut, marked).
MAX_REASON_CHARS = 500
# The doublings stop at 62 (2.0 ** 1024 overflows a float); the delay still never falls.
_MAX_DOUBLINGS = 62


class FailureKind(StrEnum):
    PERMANENT = "permanent"
    TRANSIENT = "transient"


@dataclass(frozen=True)
class RetryPolicy:
    """`daemon.max_attempts`, `daemon.retry_backoff` and `daemon.retry_backoff_max`."""

    max_attempts: int
    backoff: float
    backoff_max: float

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {self.max_attempts!r}")
        for name in ("backoff", "backoff_max"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds >= 0, not {value!r}")


@dataclass(frozen=True)
class Retry:
    """Try again at `at` (`delay` seconds after the failure); `attempts`: failed so far."""

    at: float
    delay: float
    attempts: int


@dataclass(frozen=True)
class ToPerson:
    """Stop: a person decides. `code` is the review code (`delivery_refused`: a permanent
    refusal; `delivery_failed`: the attempts spent); `attempts`: failed so far."""

    code: str
    attempts: int


def backoff_delay(attempt: int, policy: RetryPolicy) -> float:
    """The wait after the `attempt`-th failed attempt (1-based): `backoff * 2^(attempt-1)`,
    at most `backoff_max`; never decreasing in `attempt`."""
    if attempt < 1:
        raise ValueError(f"attempt must be at least 1, not {attempt}")
    doublings = min(attempt - 1, _MAX_DOUBLINGS)
    return float(min(policy.backoff * 2.0**doublings, policy.backoff_max))


def after_failure(
    kind: FailureKind, failed_before: int, now: float, policy: RetryPolicy
) -> Retry | ToPerson:
    """What follows a failed delivery attempt, `failed_before` attempts having failed
    before it (since the last success or the last person's decision)."""
    if failed_before < 0:
        raise ValueError(f"failed_before must be >= 0, not {failed_before}")
    attempts = failed_before + 1
    if kind is FailureKind.PERMANENT:
        return ToPerson("delivery_refused", attempts)
    if attempts >= policy.max_attempts:
        return ToPerson("delivery_failed", attempts)
    delay = backoff_delay(attempts, policy)
    return Retry(now + delay, delay, attempts)


def kind_of(retryable: bool) -> FailureKind:
    """The kind of a `ResolverError` by its `retryable` flag."""
    return FailureKind.TRANSIENT if retryable else FailureKind.PERMANENT


# HTTP statuses below 500 that say "later" rather than "no": request timeout, too early,
# too many requests.
_TRANSIENT_4XX = frozenset({408, 425, 429})


def classify_status(status: int) -> FailureKind:
    """An HTTP venue's answer to a delivery, other than 2xx: 5xx and 408/425/429 may pass;
    any other 4xx is the venue refusing this answer (bad request, forbidden, not found,
    conflict, gone, unprocessable)."""
    if status >= 500 or status in _TRANSIENT_4XX:
        return FailureKind.TRANSIENT
    if 400 <= status < 500:
        return FailureKind.PERMANENT
    return FailureKind.TRANSIENT  # 1xx/3xx: odd, but nothing says "never"


# Custom errors (by name) that name a standing condition: the caller is not allowed (a
# whitelist, a role, an owner), or the call is wrong for the request as it stands. UMA's
# managed OOv2 (`ProposerNotWhitelisted`, ...), OpenZeppelin's access control, and this
# project's `AgentOracle`. Not here, as waiting may cure them: `ContractPaused`, `TooEarly`,
# bond and balance errors.
PERMANENT_REVERTS = frozenset(
    {
        # UMA's managed Optimistic Oracle V2 (Polymarket's)
        "ProposerNotWhitelisted",
        "SenderNotWhitelisted",
        "RequesterNotWhitelisted",
        "UnsupportedCurrency",
        # OpenZeppelin 5 access control
        "AccessControlUnauthorizedAccount",
        "OwnableUnauthorizedAccount",
        # AgentOracle (contracts/src/AgentOracle.sol)
        "NotOwner",
        "MissingRole",
        "NotOperator",
        "InvalidOutcome",
        "InvalidStatus",
        "InvalidBondToken",
        "RoundLimitReached",
        "AlreadySettled",
        "MultiOperatorModeOff",
    }
)

# `require` messages (Error(string)) that name a standing condition, case-insensitive:
# not whitelisted / not allowed / unauthorized, and UMA's state checks (OOv2's
# "proposePriceFor: Requested", "disputePriceFor: Proposed"; OOv3's "Assertion already
# exists", "Already disputed"). Someone else having answered first never gets here: the
# venues' pre-send checks record it as theirs and nothing is sent.
_PERMANENT_MESSAGE = re.compile(
    r"not\s+whitelisted|not\s+on\s+(the\s+)?whitelist|not\s+allowed|unauthori[sz]ed|"
    r"not\s+authori[sz]ed|caller\s+is\s+not|only\s+(the\s+)?owner|access\s+denied|"
    r"\b\w+For:\s*(Requested|Proposed)\b|already\s+(exists|disputed|proposed|settled)|"
    r"unsupported\s+(identifier|currency)",
    re.IGNORECASE,
)


def classify_revert(name: str, message: str) -> FailureKind:
    """A contract's revert, by its decoded name (`oracle.chain.revert.DecodedError.name`:
    a custom error's name, `Error` for a string, `Panic`, `Unknown`, `Empty`) and its
    message (for `Error`, the string or the whole decoded text): permanent when it names
    a standing condition (`PERMANENT_REVERTS`, the messages above), transient otherwise
    (an unknown selector, an empty revert, a panic: retried, and a person looks once the
    attempts are spent)."""
    if name in PERMANENT_REVERTS:
        return FailureKind.PERMANENT
    if name == "Error" and _PERMANENT_MESSAGE.search(message):
        return FailureKind.PERMANENT
    return FailureKind.TRANSIENT


def quoted(reason: str, limit: int = MAX_REASON_CHARS) -> str:
    """A venue's reason as a person may read it: every control or invisible character
    escaped (`oracle.core.text.visible`: one line, in stored order), cut to `limit`."""
    shown = visible(reason)
    if len(shown) > limit:
        return shown[:limit] + f"... ({len(shown) - limit} more characters)"
    return shown


def review_reason(what: str, outcome: ToPerson, reason: str) -> str:
    """The review item's sentence for a delivery handed to a person: `what` was tried
    (`delivering YES`, `the confirmed dispute`), why it stopped, the venue's reason
    (escaped, cut), and what a decision does."""
    if outcome.code == "delivery_refused":
        head = f"{what} was refused, and trying again cannot help (a permanent refusal)"
    else:
        head = (
            f"{what} failed {outcome.attempts} times in a row (daemon.max_attempts), "
            "each retry later than the one before"
        )
    return (
        f"{head}: {quoted(reason)}; deciding an outcome delivers that decision (the cause "
        "must be fixed first, or it fails again)"
    )
