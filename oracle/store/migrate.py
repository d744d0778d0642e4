"""Schema migrations through Alembic, on the daemon's own engine (`oracle db upgrade`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def _config(connection: object) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    with engine.begin() as connection:
        command.upgrade(_config(connection), revision)


def check(engine: Engine) -> None:
    """Raise when the tables and the migrations disagree (`alembic check`)."""
    with engine.begin() as connection:
        command.check(_config(connection))


def revision(engine: Engine, message: str) -> None:
    """Write a new migration from the difference between the tables and the database."""
    with engine.begin() as connection:
        command.revision(_config(connection), message=message, autogenerate=True)
