"""answer windows: when each market's outcomes become final, and the research schedule's
progress (early checks, "not yet" verdicts after the window)

A market discovered but not yet due keeps its old promotion time: `next_attempt_at` takes
its `resolve_after`, which promotion read before. Markets tracked before have no window
(`answer_window` null): they are researched as before, the decision policy without a hold.

Revision ID: 7d2e4a1c9b30
Revises: 5b1c7e0d2a4f
Create Date: 2026-11-27 04:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "7d2e4a1c9b30"
down_revision = "5b1c7e0d2a4f"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.add_column(sa.Column("answer_window", sa.JSON(), nullable=True))
        batch.add_column(
            sa.Column("early_checks", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("late_deferrals", sa.Integer(), nullable=False, server_default="0")
        )
    op.execute("UPDATE market SET next_attempt_at = resolve_after WHERE state = 'discovered'")


def downgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.drop_column("late_deferrals")
        batch.drop_column("early_checks")
        batch.drop_column("answer_window")
