"""The daemon's tables (SQLModel). Times are UTC epoch seconds (float) everywhere, so
SQLite and PostgreSQL store and compare them identically.

Schema changes go through Alembic (`oracle/store/migrations/`); `alembic check` in the
tests fails when these models and the migrations disagree.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel


class MarketRow(SQLModel, table=True):
    """A market the daemon knows, its lifecycle state and who is working on it."""

    __tablename__ = "market"
    __table_args__ = (
        UniqueConstraint("source", "external_id", name="uq_market_source_external"),
        Index("ix_market_state_next", "state", "next_attempt_at"),
        Index("ix_market_state_settlement", "state", "awaits_settlement"),
        Index("ix_market_state_window", "state", "window_ends_at"),
    )

    id: str = Field(primary_key=True, max_length=200)
    source: str = Field(max_length=100)
    # The entry of `chains` its source is on (None: a source on no chain, e.g. http).
    chain: str | None = Field(default=None, max_length=50, index=True)
    external_id: str = Field(max_length=200)
    question: str
    criteria: str = ""
    outcomes: list[str] = Field(sa_column=Column(JSON, nullable=False))
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    resolve_after: float
    state: str = Field(max_length=32)
    state_changed_at: float
    attempts: int = 0  # research runs started
    failures: int = 0  # research attempts that failed (the budget is daemon.max_attempts)
    # Delivery (or confirmed challenge) attempts that failed in a row since the last one
    # that worked or the last person's decision (`oracle.core.failures`).
    delivery_failures: int = 0
    deferrals: int = 0  # times a verdict could not be submitted yet and research waits
    # When the next research may start (discovered: the first; failed or deferred: again).
    next_attempt_at: float = 0.0
    # `oracle.core.timing.AnswerWindow` as JSON (None: tracked before windows existed).
    answer_window: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    early_checks: int = 0  # research before the window closed, for an early outcome
    late_deferrals: int = 0  # "not yet" verdicts after the window closed
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_expires_at: float = 0.0
    decided_outcome: str | None = Field(default=None, max_length=300)
    proof_checksum: str | None = Field(default=None, max_length=64)
    submission: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # When the challenge window of its answer ends, on its venue's clock (None: no answer).
    window_ends_at: float | None = None
    # Someone waits for the final answer to be pushed (a callback): settled once final.
    awaits_settlement: bool = False
    version: int = 0
    created_at: float


class ResearchRunRow(SQLModel, table=True):
    """One fan-out of a market to its agents."""

    __tablename__ = "research_run"

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(foreign_key="market.id", index=True, max_length=200)
    attempt: int
    started_at: float
    finished_at: float | None = None
    status: str = Field(default="running", max_length=32)
    owner: str = Field(max_length=100)


class AgentResultRow(SQLModel, table=True):
    """One agent's answer or failure in one research run."""

    __tablename__ = "agent_result"
    __table_args__ = (UniqueConstraint("run_id", "agent_id", name="uq_agent_result_run_agent"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="research_run.id", index=True)
    agent_id: str = Field(max_length=100)
    outcome: str | None = Field(default=None, max_length=300)
    confidence: float | None = None
    reasoning: str = ""
    provider: str | None = Field(default=None, max_length=100)
    model_family: str | None = Field(default=None, max_length=100)
    error: str | None = None
    latency_seconds: float
    created_at: float


class AgentSourceRow(SQLModel, table=True):
    """A source one agent cited."""

    __tablename__ = "agent_source"

    id: int | None = Field(default=None, primary_key=True)
    agent_result_id: int = Field(foreign_key="agent_result.id", index=True)
    url: str
    title: str = ""
    category: str = Field(max_length=64)
    credibility_score: float
    relevance_score: float
    published_at: str | None = Field(default=None, max_length=64)
    quote: str = ""
    # Opened and its quote found (oracle.core.evidence); false: seen, not read.
    read: bool = True


class ConsensusRow(SQLModel, table=True):
    """A verdict and its proof; `checksum` is the proof hash committed on-chain."""

    __tablename__ = "consensus"

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(foreign_key="market.id", index=True, max_length=200)
    run_id: int | None = Field(default=None, foreign_key="research_run.id")
    outcome: str = Field(max_length=300)
    reached: bool
    action: str = Field(max_length=32)
    review_reasons: list[str] = Field(sa_column=Column(JSON, nullable=False))
    checksum: str = Field(max_length=64, index=True)
    proof: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: float


class ReviewItemRow(SQLModel, table=True):
    """A market a person must decide, with the reasons and the proof that sent it there."""

    __tablename__ = "review_item"

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(foreign_key="market.id", index=True, max_length=200)
    consensus_id: int | None = Field(default=None, foreign_key="consensus.id")
    reasons: list[str] = Field(sa_column=Column(JSON, nullable=False))
    status: str = Field(default="open", max_length=16, index=True)
    decided_outcome: str | None = Field(default=None, max_length=300)
    decided_reason: str | None = None
    decided_by: str | None = Field(default=None, max_length=100)
    decided_at: float | None = None
    created_at: float
    # Who is working on it (the console's claim; None: nobody).
    claimed_by: str | None = Field(default=None, max_length=100)
    # The evidence the decision was made on: the consensus shown and its proof checksum.
    seen_consensus_id: int | None = None
    seen_checksum: str | None = Field(default=None, max_length=64)
    # Why a second person must approve the decision (four-eyes), None when not needed.
    approval_reason: str | None = None
    approved_by: str | None = Field(default=None, max_length=100)
    approved_at: float | None = None


class AuditRow(SQLModel, table=True):
    """Every state change of every market: when, from, by which event, to, why, by whom."""

    __tablename__ = "audit_log"

    id: int | None = Field(default=None, primary_key=True)
    market_id: str = Field(index=True, max_length=200)
    at: float
    from_state: str | None = Field(default=None, max_length=32)
    event: str = Field(max_length=64)
    to_state: str = Field(max_length=32)
    reason: str = ""
    actor: str = Field(max_length=100)


class TxIntentRow(SQLModel, table=True):
    """A transaction the daemon intends to send, recorded before it is broadcast
    (the chain layer's `Intent`, whole, in `data`)."""

    __tablename__ = "tx_intent"
    __table_args__ = (Index("ix_tx_intent_unfinished", "chain_id", "sender", "final"),)

    key: str = Field(primary_key=True, max_length=200)
    chain_id: int
    sender: str = Field(max_length=42)
    nonce: int | None = None
    state: str = Field(max_length=32)
    final: bool
    data: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    updated_at: float


class TxSubjectRow(SQLModel, table=True):
    """What a live intent acts on (a question in a round, ...): one intent at a time may
    hold a subject, so an action is never in two transactions (oracle.chain.intents)."""

    __tablename__ = "tx_subject"

    subject: str = Field(primary_key=True, max_length=200)
    intent_key: str = Field(foreign_key="tx_intent.key", index=True, max_length=200)


class BondBudgetRow(SQLModel, table=True):
    """One signer's bond budget in one currency on one chain: the row every reservation
    locks (PostgreSQL: SELECT ... FOR UPDATE), and what each scope's last scan of our
    bonds on chain found (`on_chain`: scope -> {"amount": str, "seen_from": float};
    amounts are strings, a wei figure outgrows a 64-bit integer)."""

    __tablename__ = "bond_budget"

    chain_id: int = Field(primary_key=True)
    signer: str = Field(primary_key=True, max_length=42)
    currency: str = Field(primary_key=True, max_length=42)
    on_chain: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    updated_at: float


class BondReservationRow(SQLModel, table=True):
    """A bond an intent posts, reserved when the intent was recorded (same transaction),
    released once it ended without a bond on chain or a scan counts it
    (oracle.chain.intents). `amount` is a decimal string."""

    __tablename__ = "bond_reservation"
    __table_args__ = (Index("ix_bond_reservation_open", "chain_id", "signer", "released_at"),)

    id: int | None = Field(default=None, primary_key=True)
    chain_id: int
    signer: str = Field(max_length=42)
    currency: str = Field(max_length=42)
    scope: str = Field(max_length=200)
    intent_key: str = Field(index=True, max_length=200)
    amount: str = Field(max_length=80)
    created_at: float
    confirmed_at: float | None = None
    released_at: float | None = None


class ReplicaRow(SQLModel, table=True):
    """A replica that asked for work lately, and how many markets it had in flight then:
    due work is shared among the live ones by load."""

    __tablename__ = "replica"

    id: str = Field(primary_key=True, max_length=100)
    seen_at: float
    in_flight: int = 0


class JobLeaseRow(SQLModel, table=True):
    """Which replica runs a singleton job, until when."""

    __tablename__ = "job_lease"

    name: str = Field(primary_key=True, max_length=100)
    owner: str = Field(max_length=100)
    expires_at: float


class CheckpointRow(SQLModel, table=True):
    """Progress markers, such as the last block a market source scanned."""

    __tablename__ = "checkpoint"

    name: str = Field(primary_key=True, max_length=200)
    value: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    updated_at: float


class FinalOutcomeRow(SQLModel, table=True):
    """A market's outcome once final on its venue, how it became final (`finality`: an
    `oracle.core.scoring.Finality`), and the answer the oracle had given by then: what
    the accuracy ledger scores the agents and the policy on."""

    __tablename__ = "final_outcome"

    market_id: str = Field(foreign_key="market.id", primary_key=True, max_length=200)
    venue: str = Field(max_length=100, index=True)
    outcome: str = Field(max_length=300)
    finality: str = Field(max_length=32)
    final_at: float = Field(index=True)  # when the daemon (or a person) saw it final
    delivered_outcome: str | None = Field(default=None, max_length=300)
    recorded_by: str = Field(max_length=100)
    reason: str = ""


class ConsoleUserRow(SQLModel, table=True):
    """A person who may use the review console, with a role and an argon2 password hash."""

    __tablename__ = "console_user"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=100, unique=True)
    role: str = Field(max_length=16)
    password_hash: str
    active: bool = True
    created_at: float


class ConsoleSessionRow(SQLModel, table=True):
    """A signed-in browser: only the SHA-256 of its random token is stored."""

    __tablename__ = "console_session"

    token_hash: str = Field(primary_key=True, max_length=64)
    user_id: int = Field(foreign_key="console_user.id", index=True)
    csrf_token: str = Field(max_length=64)
    created_at: float
    expires_at: float


class ApiTokenRow(SQLModel, table=True):
    """A token for scripts and the command line, acting as its user (stored hashed)."""

    __tablename__ = "console_api_token"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(max_length=64, unique=True)
    user_id: int = Field(foreign_key="console_user.id", index=True)
    created_at: float
    revoked_at: float | None = None


class LoginThrottleRow(SQLModel, table=True):
    """Failed sign-ins per account and address, shared by every console replica."""

    __tablename__ = "console_login_throttle"

    key: str = Field(primary_key=True, max_length=300)
    failures: int = 0
    first_failure_at: float
    locked_until: float = 0.0


class ConsoleAuditRow(SQLModel, table=True):
    """One entry of the console's append-only, hash-chained audit log: `hash` is the
    SHA-256 of the RFC 8785 JSON of the entry without it (`oracle.core.audit`); a
    `prev_hash` is unique, so the chain never forks."""

    __tablename__ = "console_audit"

    id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    at: float
    actor: str = Field(max_length=100)
    action: str = Field(max_length=64)
    subject: str = Field(max_length=200, index=True)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    prev_hash: str = Field(max_length=64, unique=True)
    hash: str = Field(max_length=64)


class ConsoleNoticeRow(SQLModel, table=True):
    """A per-person notification (`oracle.console.notify`), recorded before it is sent so
    a failed POST is retried and a restarted console sends what is still pending.
    `status`: pending, sent or given_up; `attempts`: POSTs begun; `last_error`: why the
    last one failed (an error's type or an HTTP status, never the URL)."""

    __tablename__ = "console_notice"
    __table_args__ = (Index("ix_console_notice_due", "status", "next_attempt_at"),)

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=32)
    review: int
    body: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    status: str = Field(max_length=16)
    attempts: int = 0
    next_attempt_at: float
    last_error: str = Field(default="", max_length=200)
    created_at: float
    finished_at: float | None = None
