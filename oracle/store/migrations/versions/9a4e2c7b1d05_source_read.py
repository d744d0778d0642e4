"""source read: whether an agent read the page it cited (opened it and its quote is in
the text it was shown) or only saw it (a search hit): a source seen, not read, counts for
nothing

Sources recorded before were counted as read, and stay so (server default true).

Revision ID: 9a4e2c7b1d05
Revises: 9e4f2a6b1c07
Create Date: 2026-11-28 12:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "9a4e2c7b1d05"
down_revision = "9e4f2a6b1c07"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_source") as batch:
        batch.add_column(sa.Column("read", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("agent_source") as batch:
        batch.drop_column("read")
