"""bond budget: one per signer, chain and currency, and the bonds reserved against it

`bond_budget` is the row each reservation locks and holds what each venue's last scan of
our bonds found on chain; `bond_reservation` holds each bond recorded with its intent and
not yet counted by a scan (oracle.chain.intents). Both start empty: bonds already on chain
are counted by the venues' first scans.

Revision ID: 3c8f1b2d6e90
Revises: 7d2e4a1c9b30
Create Date: 2026-11-30 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision = "3c8f1b2d6e90"
down_revision = "7d2e4a1c9b30"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bond_budget",
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("signer", sqlmodel.sql.sqltypes.AutoString(length=42), nullable=False),
        sa.Column("currency", sqlmodel.sql.sqltypes.AutoString(length=42), nullable=False),
        sa.Column("on_chain", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("chain_id", "signer", "currency"),
    )
    op.create_table(
        "bond_reservation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("signer", sqlmodel.sql.sqltypes.AutoString(length=42), nullable=False),
        sa.Column("currency", sqlmodel.sql.sqltypes.AutoString(length=42), nullable=False),
        sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("intent_key", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("amount", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("confirmed_at", sa.Float(), nullable=True),
        sa.Column("released_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("bond_reservation", schema=None) as batch_op:
        batch_op.create_index(
            "ix_bond_reservation_open", ["chain_id", "signer", "released_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_bond_reservation_intent_key"), ["intent_key"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("bond_reservation", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bond_reservation_intent_key"))
        batch_op.drop_index("ix_bond_reservation_open")
    op.drop_table("bond_reservation")
    op.drop_table("bond_budget")
