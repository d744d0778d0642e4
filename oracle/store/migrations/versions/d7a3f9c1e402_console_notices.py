"""console notices: per-person notifications recorded before they are sent, so a failed
POST is retried with back-off and a restarted console sends what is still pending

Revision ID: d7a3f9c1e402
Revises: c5d81f3a7e29
Create Date: 2026-11-28 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "d7a3f9c1e402"
down_revision = "c5d81f3a7e29"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_notice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("review", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.Float(), nullable=False),
        sa.Column("last_error", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("console_notice") as batch:
        batch.create_index("ix_console_notice_due", ["status", "next_attempt_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("console_notice") as batch:
        batch.drop_index("ix_console_notice_due")
    op.drop_table("console_notice")
