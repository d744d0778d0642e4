"""Opening the database: for the daemon, which creates and migrates it, and for the
commands that only use it, which never do.

- `open_database(url, create=True)` (`oracle run`, `oracle db upgrade`): a missing SQLite
  file and its directory are created, pending migrations are applied (serialised across
  replicas, see `migrate.upgrade`), and the database must take writes.
- `open_database(url, create=False)` (`oracle review ...`): the database must exist and be
  at the current schema; nothing is created, migrated or written.

Either way a database that cannot be used is a `SetupError` naming `database.url`, with
the URL as the logs show it (`redact_url`: no credentials) and the reason.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from oracle.core.urls import redact_url
from oracle.errors import SetupError
from oracle.files import make_directory
from oracle.store.engine import READ_ONLY, make_engine, sqlite_file
from oracle.store.migrate import current_revision, head_revision, known_revision, upgrade

KEY = "database.url"
UPGRADE_HINT = "run `oracle db upgrade`"
# A statement that needs write access and changes nothing; `market` is the daemon's own.
_WRITE_PROBE = text("UPDATE market SET id = id WHERE 1 = 0")


def open_database(
    url: str, *, create: bool, source_chains: Mapping[str, str] | None = None
) -> Engine:
    """An engine on a database that answers and is at the current schema (see above);
    `source_chains` (each market source's chain) names the chain of markets recorded
    before markets had one, when a migration adds it."""
    return _open(url, create=create, source_chains=source_chains)[0]


def upgrade_database(
    url: str, source_chains: Mapping[str, str] | None = None
) -> tuple[str | None, str]:
    """Create the database at `url` if needed and migrate it to the current schema (as
    `open_database(url, create=True)`); its schema revision before (None: it had no
    oracle schema) and after, for `oracle db upgrade` to say what it did."""
    engine, before = _open(url, create=True, source_chains=source_chains)
    engine.dispose()
    return before, head_revision()


def _open(
    url: str, *, create: bool, source_chains: Mapping[str, str] | None = None
) -> tuple[Engine, str | None]:
    shown = redact_url(url)
    path = sqlite_file(url)
    if path is not None:
        if create:
            try:
                make_directory(path.parent)
            except OSError as error:
                problem = f"cannot create the directory {path.parent} ({error.strerror})"
                raise SetupError(KEY, f"{shown}: {problem}") from None
        elif not path.exists():
            raise SetupError(
                KEY, f"{shown}: no database at {path.absolute()} ({UPGRADE_HINT} to create it)"
            )
    engine = make_engine(url, set_wal=create)
    try:
        before = _prepare(engine, url, create=create, source_chains=source_chains)
    except BaseException:
        engine.dispose()
        raise
    return engine, before


def _prepare(
    engine: Engine, url: str, *, create: bool, source_chains: Mapping[str, str] | None = None
) -> str | None:
    """Check (and with `create`, migrate) the database; its schema revision before."""
    shown = redact_url(url)
    opening = "cannot open" if sqlite_file(url) is not None else "cannot connect"
    try:
        with engine.connect() as connection:
            connection.execution_options(**{READ_ONLY: True})
            revision = current_revision(connection)
    except DBAPIError as error:
        raise SetupError(KEY, f"{shown}: {opening} ({describe(error, url)})") from None
    if revision is not None and not known_revision(revision):
        raise SetupError(
            KEY,
            f"{shown}: the schema is at revision {revision}, which this version of oracle "
            "does not know (a newer one migrated it)",
        )
    if not create:
        if revision is None:
            raise SetupError(KEY, f"{shown}: no oracle schema in it ({UPGRADE_HINT})")
        if revision != head_revision():
            raise SetupError(
                KEY,
                f"{shown}: the schema is at revision {revision}, not the current "
                f"{head_revision()} ({UPGRADE_HINT})",
            )
        return revision
    try:
        upgrade(engine, source_chains=source_chains)
    except DBAPIError as error:
        raise SetupError(KEY, f"{shown}: cannot migrate ({describe(error, url)})") from None
    try:
        with engine.begin() as connection:
            connection.execute(_WRITE_PROBE)
    except DBAPIError as error:
        raise SetupError(KEY, f"{shown}: is not writable ({describe(error, url)})") from None
    return revision


def describe(error: DBAPIError, url: str) -> str:
    """The driver's reason, first line only, without the URL's user name or password."""
    lines = str(error.orig).strip().splitlines() or [type(error.orig).__name__]
    reason = lines[0].removeprefix("connection failed: ")
    parsed = make_url(url)
    if parsed.password:
        reason = reason.replace(str(parsed.password), "***")
    if parsed.username:
        reason = reason.replace(f'"{parsed.username}"', '"***"')
    return reason


def ping(engine: Engine) -> None:
    """Raise unless the database answers (the readiness probe)."""
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
