"""final outcomes: each final market's outcome and how it became final

Markets already final get their row from what the daemon recorded then: the answer it
gave, final by time when the window passed, or the arbiter's outcome (from the audit
line "arbiter settled on X") after a dispute; seen final when their state last changed.

Revision ID: afcbc68fbdd3
Revises: 64613d093a55
Create Date: 2026-11-23 02:01:19.354622
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "afcbc68fbdd3"
down_revision = "64613d093a55"
branch_labels = None
depends_on = None

_SETTLED_ON = "arbiter settled on "


def upgrade() -> None:
    final_outcome = op.create_table(
        "final_outcome",
        sa.Column("market_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("venue", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
        sa.Column("finality", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("final_at", sa.Float(), nullable=False),
        sa.Column("delivered_outcome", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=True),
        sa.Column("recorded_by", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["market_id"], ["market.id"]),
        sa.PrimaryKeyConstraint("market_id"),
    )
    with op.batch_alter_table("final_outcome", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_final_outcome_final_at"), ["final_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_final_outcome_venue"), ["venue"], unique=False)
    _backfill(final_outcome)


def _backfill(final_outcome: sa.Table) -> None:
    connection = op.get_bind()
    finals = connection.execute(
        sa.text(
            "SELECT id, source, decided_outcome, state_changed_at FROM market "
            "WHERE state = 'final' AND decided_outcome IS NOT NULL"
        )
    ).all()
    rows = []
    for market_id, venue, decided, changed_at in finals:
        last = connection.execute(
            sa.text(
                "SELECT event, reason FROM audit_log WHERE market_id = :id AND to_state = 'final' "
                "ORDER BY id DESC LIMIT 1"
            ),
            {"id": market_id},
        ).first()
        event, reason = last if last is not None else ("window_passed", "")
        outcome, finality = decided, "time"
        if event in ("dispute_upheld", "dispute_rejected"):
            finality = "arbiter"
            ruled = reason.removeprefix(_SETTLED_ON) if reason.startswith(_SETTLED_ON) else ""
            if event == "dispute_upheld" and ruled and ruled != "None":
                outcome = ruled
        rows.append(
            {
                "market_id": market_id,
                "venue": venue,
                "outcome": outcome,
                "finality": finality,
                "final_at": changed_at,
                "delivered_outcome": decided,
                "recorded_by": "migration afcbc68fbdd3",
                "reason": reason or "",
            }
        )
    if rows:
        op.bulk_insert(final_outcome, rows)


def downgrade() -> None:
    with op.batch_alter_table("final_outcome", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_final_outcome_venue"))
        batch_op.drop_index(batch_op.f("ix_final_outcome_final_at"))
    op.drop_table("final_outcome")
