"""market chain: the entry of `chains` each market's source is on

Markets recorded before get theirs from the configuration the migration runs with (the
daemon's, or `oracle db upgrade`'s: each chain source's `chain`, or the only chain):
`source_chains` in the Alembic config's attributes. A market whose source is on no chain
(http), or no longer configured, keeps null; the daemon names the chain of any market of
a configured chain source still without one when it starts.

Revision ID: c5d81f3a7e29
Revises: 9a4e2c7b1d05
Create Date: 2026-11-28 12:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import context, op

revision = "c5d81f3a7e29"
down_revision = "9a4e2c7b1d05"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.add_column(
            sa.Column("chain", sqlmodel.sql.sqltypes.AutoString(length=50), nullable=True)
        )
        batch.create_index("ix_market_chain", ["chain"], unique=False)
    source_chains: dict[str, str] = context.config.attributes.get("source_chains", {})
    market = sa.table("market", sa.column("source", sa.String), sa.column("chain", sa.String))
    for source, chain in sorted(source_chains.items()):
        op.execute(
            market.update()
            .where(market.c.source == source, market.c.chain.is_(None))
            .values(chain=chain)
        )


def downgrade() -> None:
    with op.batch_alter_table("market") as batch:
        batch.drop_index("ix_market_chain")
        batch.drop_column("chain")
