"""Schema migrations through Alembic, on the daemon's own engine (`oracle db upgrade`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, text

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def _config(connection: object, source_chains: Mapping[str, str] | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    # The chain each configured market source is on, for data steps that need it.
    config.attributes["source_chains"] = dict(source_chains or {})
    return config


# Any constant shared by every replica; replicas starting together migrate one at a time.
_MIGRATION_LOCK_ID = 7_300_417


def head_revision() -> str:
    """The newest revision this version of oracle knows."""
    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert head is not None, "oracle ships at least one migration"
    return head


def known_revision(revision: str) -> bool:
    """Whether `revision` is one of this version's migrations."""
    try:
        return ScriptDirectory(str(MIGRATIONS)).get_revision(revision) is not None
    except CommandError:
        return False


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at; None when it has no oracle schema."""
    return MigrationContext.configure(connection).get_current_revision()


def upgrade(
    engine: Engine, revision: str = "head", *, source_chains: Mapping[str, str] | None = None
) -> None:
    """Migrate to `revision`; `source_chains` (market source -> the entry of `chains` it
    is on, from the configuration) feeds the data steps that name a market's chain."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:id)"), {"id": _MIGRATION_LOCK_ID}
            )
        command.upgrade(_config(connection, source_chains), revision)


def check(engine: Engine) -> None:
    """Raise when the tables and the migrations disagree (`alembic check`)."""
    with engine.begin() as connection:
        command.check(_config(connection))


def revision(engine: Engine, message: str) -> None:
    """Write a new migration from the difference between the tables and the database."""
    with engine.begin() as connection:
        command.revision(_config(connection), message=message, autogenerate=True)
