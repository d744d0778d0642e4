"""Database engines: SQLite (embedded default) and PostgreSQL (production), by URL.

SQLite runs in WAL mode with a busy timeout. Write transactions start with
`BEGIN IMMEDIATE`, so two writers queue for the lock instead of failing half-way with
"database is locked" when a read transaction tries to become a write transaction;
read-only transactions (execution option `READ_ONLY`) begin deferred and run beside them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
# Execution option marking read-only transactions, which begin deferred on SQLite.
READ_ONLY = "oracle_read_only"


def make_engine(url: str) -> Engine:
    """An engine for `url`; creates the SQLite file's directory when needed."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            pool_size=8,
            max_overflow=8,
        )
        _configure_sqlite(engine)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in ("", "psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=10)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(connection: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy's `begin` event issue BEGIN; pysqlite's own would be deferred.
        connection.isolation_level = None
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def is_postgresql(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"
