"""The daemon's persistence, one class per aggregate over one shared transaction helper
(`_transaction.Transactions`), composed here into the `Store` the daemon, the commands
and the tests use:

- `Markets` (markets.py): discovery, lifecycle moves, audit trail, what each stage finds.
- `Leases` (leases.py): market claims shared by load, singleton-job leases, leaving.
- `ResearchRuns` (research.py): runs and every agent's answer.
- `Verdicts` (verdicts.py): consensus results with their proofs; a verdict that needs a
  person opens its item in the review queue, `Reviews` (reviews.py), which also holds
  a person's decisions.
- `Deliveries` (deliveries.py): a decision on its way to the venue; settlement.
- `ConsoleRecords` (console.py, under `Reviews`): the review console's accounts,
  sessions, API tokens, sign-in throttling and hash-chained audit log.
- `Checkpoints` (checkpoints.py): where a job left off.
- `Outcomes` (outcomes.py): the accuracy ledger: final outcomes and how each became
  final, stored with the move to `final`; read back with verdicts and answers to score.
- `PendingTransactions` (intents.py): the chain's unfinished transaction intents, counted
  (the intents themselves are read and written by `DatabaseIntentStore`, same module).

Synchronous (SQLAlchemy); the daemon calls it through `asyncio.to_thread`. Every method
is one transaction. Concurrency between replicas:

- Work is claimed with row leases: `claim` takes markets whose lease has expired, with
  `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL (replicas skip each other's rows
  instead of waiting) and `BEGIN IMMEDIATE` on SQLite (one writer at a time).
- A state change locks the row, checks the caller still holds the lease, asks the pure
  lifecycle table for the next state, and writes the audit row in the same transaction
  (`Transactions._transition`, the only writer of a market's state). A replica whose
  lease was taken over gets `LeaseLost` and stops.
- A stage's data and the transition that ends the stage share one transaction
  (`start_research`, `finish_research`, `record_verdict`, `decide_review`, ...): a crash
  leaves either both or neither.
"""

from __future__ import annotations

from oracle.store.checkpoints import Checkpoints
from oracle.store.deliveries import Deliveries
from oracle.store.intents import PendingTransactions
from oracle.store.leases import Leases
from oracle.store.markets import Markets
from oracle.store.outcomes import Outcomes
from oracle.store.research import ResearchRuns
from oracle.store.verdicts import Verdicts

__all__ = ["Store"]


class Store(
    Markets,
    Leases,
    ResearchRuns,
    Verdicts,
    Deliveries,
    Checkpoints,
    PendingTransactions,
    Outcomes,
):
    """Every aggregate of the daemon's database, on one engine and clock."""
