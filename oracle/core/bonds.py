"""Whether a proposal's bond may be posted: a venue's risk caps, pure, no I/O.

A proposer on UMA's Optimistic Oracle pays in the request's bond plus its final fee and
gets both back (with the reward) when its price stands; a disputed wrong price loses the
bond. `check_bond` weighs one proposal against the venue's caps, all in the currency's
smallest unit:

* `max_per_request`: bond + final fee of this request;
* `max_outstanding`: bonds + final fees posted and not returned yet, this one included;
* `min_reward`: the request must pay at least this;
* `gas_cost`: when known (the gas price and the native token's price in the currency are
  configured), the reward must cover the proposal's gas.

It returns None when the proposal may go, else a `Refusal` with a reason code (a metric
label) and a sentence that names the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from oracle.core.decision import ReviewReason

REFUSAL_REASONS = (
    "per_request_cap",
    "outstanding_cap",
    "reward_below_minimum",
    "reward_below_gas",
    "not_whitelisted",  # UMA's managed oracle would refuse the signer (`ManagedTerms`)
)


@dataclass(frozen=True)
class BondCaps:
    """A venue's caps in the currency's smallest unit (None: no cap)."""

    max_per_request: int | None = None
    max_outstanding: int | None = None
    min_reward: int = 0

    @classmethod
    def in_units(
        cls,
        decimals: int,
        *,
        max_per_request: Decimal | None,
        max_outstanding: Decimal | None,
        min_reward: Decimal = Decimal(0),
    ) -> BondCaps:
        """Caps set in whole tokens, in the smallest unit of a currency of `decimals`."""
        return cls(
            max_per_request=None
            if max_per_request is None
            else to_units(max_per_request, decimals),
            max_outstanding=None
            if max_outstanding is None
            else to_units(max_outstanding, decimals),
            min_reward=to_units(min_reward, decimals),
        )


@dataclass(frozen=True)
class Refusal:
    reason: str  # one of REFUSAL_REASONS
    detail: str


def to_units(amount: Decimal, decimals: int) -> int:
    """`amount` of a currency (100.5) in its smallest unit, rounded up (a cap or a
    minimum never loosens by rounding)."""
    if decimals < 0:
        raise ValueError("decimals: expected a non-negative integer")
    return int((amount * 10**decimals).to_integral_value(rounding=ROUND_CEILING))


def gas_cost_in_currency(
    gas: int, gas_price_wei: int, native_token_price: Decimal, decimals: int
) -> int:
    """What `gas` at `gas_price_wei` costs, in the currency's smallest unit, given what one
    native token (1e18 wei) is worth in the currency."""
    native = Decimal(gas * gas_price_wei) / Decimal(10**18)
    return to_units(native * native_token_price, decimals)


def check_bond(
    *,
    bond: int,
    final_fee: int,
    reward: int,
    outstanding: int,
    caps: BondCaps,
    gas_cost: int | None = None,
) -> Refusal | None:
    """None when a proposal posting `bond` + `final_fee` for `reward` may go, with
    `outstanding` already posted; else why not (see the module docstring)."""
    for name, value in (
        ("bond", bond),
        ("final_fee", final_fee),
        ("reward", reward),
        ("outstanding", outstanding),
    ):
        if value < 0:
            raise ValueError(f"{name}: expected a non-negative amount, got {value}")
    at_stake = bond + final_fee
    if caps.max_per_request is not None and at_stake > caps.max_per_request:
        return Refusal(
            "per_request_cap",
            f"bond + final fee {at_stake} is above the per-request cap {caps.max_per_request}",
        )
    if caps.max_outstanding is not None and outstanding + at_stake > caps.max_outstanding:
        return Refusal(
            "outstanding_cap",
            f"{outstanding} already posted + {at_stake} would be above the cap "
            f"{caps.max_outstanding} on bonds outstanding",
        )
    if reward < caps.min_reward:
        return Refusal(
            "reward_below_minimum", f"reward {reward} is below the minimum {caps.min_reward}"
        )
    if gas_cost is not None and reward < gas_cost:
        return Refusal(
            "reward_below_gas", f"reward {reward} does not cover the proposal's gas ({gas_cost})"
        )
    return None


# A re-ask of a request whose proposal (ours) someone disputed: a person decides first.
OUR_PROPOSAL_DISPUTED = "our_proposal_disputed"


def reask_review_reasons(disputed_proposal: Mapping[str, Any] | None) -> list[ReviewReason]:
    """Why a person must look before the daemon bonds on a re-ask again: the request it
    re-asks carried our proposal and someone put a bond against it (`disputed_proposal`, as
    the venue records it at discovery: `proposer`, `disputer`, `ours`; None: not a re-ask).
    Proposing the same answer again would stake a second bond on what a disputer already
    paid to contest, and a second dispute goes to UMA's vote."""
    if not disputed_proposal or not disputed_proposal.get("ours"):
        return []
    return [
        ReviewReason(
            OUR_PROPOSAL_DISPUTED,
            f"a re-ask: our proposal on the request it re-asks was disputed by "
            f"{disputed_proposal.get('disputer')}; a person decides before another bond is "
            "posted (a second dispute goes to UMA's vote)",
        )
    ]


# --- UMA's managed Optimistic Oracle V2 (UMIP-189) and the bond currency's allowance -------


@dataclass(frozen=True)
class ManagedTerms:
    """What UMA's ManagedOptimisticOracleV2 will do with a proposal on one request, read
    before anything is signed: the effective proposer whitelist (the request manager's for
    the request, else the default) with its enabled status, and the bond and liveness the
    request manager set (0: none; the requester's then apply)."""

    allowed: tuple[str, ...]
    enabled: bool
    custom_bond: int = 0
    custom_liveness: int = 0

    def may_propose(self, signer: str) -> bool:
        """A disabled whitelist lets anyone propose; an enabled one only those listed."""
        return not self.enabled or signer.lower() in {a.lower() for a in self.allowed}

    def charged_bond(self, requester_bond: int) -> int:
        """The bond `proposePriceFor` pulls (the final fee comes on top): the request
        manager's custom bond when set, else the one the request shows."""
        return self.custom_bond if self.custom_bond else requester_bond

    def liveness(self, requester_liveness: int, default_liveness: int) -> int:
        """The liveness a proposal made now runs for."""
        return self.custom_liveness or requester_liveness or default_liveness


def allowance_to_approve(current: int, needed: int, configured: int | None) -> int | None:
    """The allowance a bond currency's `approve` should set before a bond of `needed` is
    pulled, or None when the `current` one covers it. Exactly what is needed, unless a
    larger standing allowance is `configured` (in the currency's smallest unit); never
    unlimited unless so configured."""
    if needed < 0 or current < 0:
        raise ValueError("allowance: amounts are never negative")
    if configured is not None and configured <= 0:
        raise ValueError("allowance: a configured allowance is positive")
    if current >= needed:
        return None
    return needed if configured is None or configured < needed else configured
