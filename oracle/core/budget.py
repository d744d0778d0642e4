"""One bond budget per signer and currency: whether a new bond fits, pure, no I/O.

Every bond a venue posts (an UMA proposal or dispute, an OOv3 assertion or dispute, a
Reality.eth answer or defence) is weighed here against the caps of the venue that posts
it, with everything the signer has at stake in that currency on that chain, across
venues and replicas:

* `outstanding`: bonds on chain and not returned yet, as the venues' scans last saw them;
* `reserved`: bonds recorded (their intent signed) and not yet counted by a scan;
* `stake`: what the per-request cap weighs (the bond itself; on Reality.eth, our bonds
  already on the question plus this one).

The amounts are in the currency's smallest unit. The daemon's database applies this rule
atomically when an intent is recorded (`oracle.store.intents`); a venue also asks it
before it starts, to refuse early.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracle.core.bonds import Refusal

PER_REQUEST_CAP = "per_request_cap"
OUTSTANDING_CAP = "outstanding_cap"


@dataclass(frozen=True)
class BudgetCaps:
    """A venue's bond caps (None: no cap) and the reason codes its refusals carry (a
    venue keeps its own: Reality.eth says `per_question_cap` and `total_cap`)."""

    max_per_request: int | None = None
    max_outstanding: int | None = None
    per_request_reason: str = PER_REQUEST_CAP
    outstanding_reason: str = OUTSTANDING_CAP


def check_budget(
    caps: BudgetCaps,
    *,
    amount: int,
    outstanding: int,
    reserved: int,
    stake: int | None = None,
) -> Refusal | None:
    """None when a bond of `amount` may be posted with `outstanding` on chain and
    `reserved` on its way; else why not (see the module docstring)."""
    stake = amount if stake is None else stake
    for name, value in (
        ("amount", amount),
        ("outstanding", outstanding),
        ("reserved", reserved),
        ("stake", stake),
    ):
        if value < 0:
            raise ValueError(f"{name}: expected a non-negative amount, got {value}")
    if caps.max_per_request is not None and stake > caps.max_per_request:
        return Refusal(
            caps.per_request_reason,
            f"a bond of {stake} is above the per-request cap {caps.max_per_request}",
        )
    at_stake = outstanding + reserved
    if caps.max_outstanding is not None and at_stake + amount > caps.max_outstanding:
        return Refusal(
            caps.outstanding_reason,
            f"{outstanding} outstanding + {reserved} reserved + {amount} would be above the "
            f"cap {caps.max_outstanding} on bonds outstanding",
        )
    return None
