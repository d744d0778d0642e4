"""source quotes: the words on the page an agent cited a source for

Sources recorded before have none ("").

Revision ID: 5b1c7e0d2a4f
Revises: afc40181db95
Create Date: 2026-11-23 03:25:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "5b1c7e0d2a4f"
down_revision = "afc40181db95"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agent_source") as batch:
        batch.add_column(
            sa.Column(
                "quote", sqlmodel.sql.sqltypes.AutoString(), nullable=False, server_default=""
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("agent_source") as batch:
        batch.drop_column("quote")
