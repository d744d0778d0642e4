"""Pure nonce bookkeeping for one signer; no I/O.

The transaction manager owns every nonce it has handed out until the intent that holds
it reaches a final state ("live" nonces). When it needs a nonce it asks the node for the
account's pending nonce and plans with `plan_nonce`:

* the next nonce is above every live nonce and at least the node's pending nonce, so two
  submissions never share a nonce even when the node has not seen our latest broadcast;
* a local counter that ran ahead of both (a nonce was reserved and then given up) is
  resynced down, so no gap is created;
* a local counter behind the node (someone else used the key: "nonce too low") jumps up;
* `holes` are nonces below our highest live one that neither we nor the node's pool will
  fill: a later transaction of ours waits behind them forever unless they are filled.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass


@dataclass(frozen=True)
class NoncePlan:
    next_nonce: int
    holes: tuple[int, ...]
    resynced: bool


def plan_nonce(chain_pending: int, live: Collection[int], local_next: int | None) -> NoncePlan:
    """The next nonce to use, the holes to fill, and whether the local counter moved.

    `chain_pending` is `eth_getTransactionCount(address, "pending")`; `live` the nonces
    of this signer's unfinished intents; `local_next` the locally tracked next nonce
    (None before the first plan).
    """
    if chain_pending < 0 or any(n < 0 for n in live):
        raise ValueError("nonces must not be negative")
    top = max(live, default=-1)
    next_nonce = max(chain_pending, top + 1)
    holes = tuple(n for n in range(chain_pending, top) if n not in live)
    resynced = local_next is not None and local_next != next_nonce
    return NoncePlan(next_nonce, holes, resynced)


class NonceBook:
    """The locally tracked next nonce of one signer (the caller serialises access)."""

    def __init__(self) -> None:
        self._next: int | None = None

    @property
    def next_nonce(self) -> int | None:
        return self._next

    def plan(self, chain_pending: int, live: Collection[int]) -> NoncePlan:
        plan = plan_nonce(chain_pending, live, self._next)
        self._next = plan.next_nonce
        return plan

    def take(self) -> int:
        """Hand out the planned nonce and advance."""
        if self._next is None:
            raise RuntimeError("plan() must be called before take()")
        nonce = self._next
        self._next += 1
        return nonce

    def give_back(self, nonce: int) -> None:
        """Return the most recently taken nonce when its transaction was never broadcast."""
        if self._next == nonce + 1:
            self._next = nonce
