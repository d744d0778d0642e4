"""Database engines: SQLite (embedded default) and PostgreSQL (production), by URL.

Making an engine touches nothing: `oracle.store.database` opens, creates and migrates.

SQLite runs in WAL mode (set by the engines that create or migrate the database; it is
kept in the file) with a busy timeout. Write transactions start with
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

from oracle.scrub import SCRUBBER, scrub_value

SQLITE_BUSY_TIMEOUT_MS = 30_000
# Seconds to wait for a PostgreSQL server; without it an unreachable host blocks for minutes.
POSTGRES_CONNECT_TIMEOUT = 10
# Execution option marking read-only transactions, which begin deferred on SQLite.
READ_ONLY = "oracle_read_only"


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (also in `file:` URI form); None for another database or
    an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    name = parsed.database
    if parsed.query.get("uri") == "true" and name.startswith("file:"):
        name = name.removeprefix("file:").split("?", 1)[0]
        if name in ("", ":memory:"):
            return None
    return Path(name)


def make_engine(url: str, *, set_wal: bool = True) -> Engine:
    """An engine for `url` (nothing is connected or created yet). Without `set_wal`, a
    connection leaves the SQLite file's journal mode as it is."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            pool_size=8,
            max_overflow=8,
        )
        _configure_sqlite(engine, set_wal=set_wal)
        _scrub_writes(engine)
        return engine
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() in ("", "psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    connect_args = {"connect_timeout": POSTGRES_CONNECT_TIMEOUT}
    if "connect_timeout" in parsed.query:
        connect_args = {}
    engine = create_engine(
        parsed, pool_pre_ping=True, pool_size=10, max_overflow=10, connect_args=connect_args
    )
    _scrub_writes(engine)
    return engine


def _scrub_writes(engine: Engine) -> None:
    """No configured secret in a row written (`oracle.scrub`), whichever path wrote it: the
    string parameters of every INSERT and UPDATE are scrubbed (the console's hash-chained
    audit log excepted: a row changed after its hash was taken would break the chain)."""

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _scrubbed(
        _connection: Any,
        _cursor: Any,
        statement: str,
        parameters: Any,
        _context: Any,
        _executemany: bool,
    ) -> tuple[str, Any]:
        if not SCRUBBER.active or not parameters:
            return statement, parameters
        verb = statement.lstrip()[:6].upper()
        if verb not in ("INSERT", "UPDATE") or "console_audit" in statement:
            return statement, parameters
        return statement, scrub_value(parameters)


def _configure_sqlite(engine: Engine, *, set_wal: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(connection: sqlite3.Connection, _record: Any) -> None:
        # Let SQLAlchemy's `begin` event issue BEGIN; pysqlite's own would be deferred.
        connection.isolation_level = None
        cursor = connection.cursor()
        if set_wal:
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
