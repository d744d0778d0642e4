"""delivery failures: failed delivery attempts in a row, so a refused answer goes to a
person (at once when refused for good, after daemon.max_attempts otherwise) instead of
being retried at a constant interval

Revision ID: 9e4f2a6b1c07
Revises: 3c8f1b2d6e90
Create Date: 2026-11-28 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "9e4f2a6b1c07"
down_revision = "3c8f1b2d6e90"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.add_column(
            sa.Column("delivery_failures", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.drop_column("delivery_failures")
