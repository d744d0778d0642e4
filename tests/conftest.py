from __future__ import annotations

import os
import signal
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import create_engine, text

from oracle.core import ConsensusParams, SourceThresholds

from .anvil import Anvil, AnvilFactory, anvil_binary, free_port


@pytest.fixture
def params() -> ConsensusParams:
    return ConsensusParams()


@pytest.fixture
def thresholds() -> SourceThresholds:
    return SourceThresholds()


POSTGRES_ADMIN_URL = os.environ.get(
    "ORACLE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _postgres_unavailable_reason() -> str | None:
    try:
        with psycopg.connect(
            POSTGRES_ADMIN_URL.replace("+psycopg", ""), connect_timeout=3, autocommit=True
        ):
            return None
    except Exception as error:  # any failure to connect means: skip, and say why
        return f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test session, dropped afterwards."""
    reason = _postgres_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    name = f"oracle_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = POSTGRES_ADMIN_URL.replace("+psycopg", "")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Each test using this runs once on SQLite and once on PostgreSQL, on an empty schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'oracle.db'}"
        return
    yield empty_postgres_database(request)


def empty_postgres_database(request: pytest.FixtureRequest) -> str:
    """The session's PostgreSQL test database with its schema emptied (skips without one)."""
    url: str = request.getfixturevalue("postgres_server_url")
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()
    return url


@pytest.fixture
def anvil_factory(tmp_path: Path) -> Iterator[AnvilFactory]:
    binary = anvil_binary()
    if binary is None:
        pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
    started: list[Anvil] = []

    def make(*args: str, state: Path | None = None, start: bool = True) -> Anvil:
        node = Anvil(binary, list(args), state)
        started.append(node)
        if start:
            for attempt in range(3):
                try:
                    node.start()
                    break
                except RuntimeError:
                    if attempt == 2:
                        raise
                    node.port = free_port()
        return node

    yield make
    for node in started:
        node.stop(signal.SIGKILL)


@pytest.fixture
def anvil(anvil_factory: AnvilFactory) -> Anvil:
    """An automining anvil."""
    return anvil_factory()


def pytest_unconfigure(config: pytest.Config) -> None:
    """A thread a test left behind must not keep the run alive after its summary.

    The interpreter joins every non-daemon thread at exit (asyncio's `to_thread` workers
    among them), so one test's thread blocked on an event that its failure never set held
    CI until its 90-minute limit. A watchdog gives the exit a minute, then names the threads
    still running and ends the run failed.
    """

    def watch() -> None:
        time.sleep(60)
        frames = sys._current_frames()
        for thread in threading.enumerate():
            if thread is threading.current_thread() or thread is threading.main_thread():
                continue
            print(f"\nthread left running after the tests: {thread.name}", file=sys.stderr)
            traceback.print_stack(frames.get(thread.ident or 0), file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)

    threading.Thread(target=watch, name="exit-watchdog", daemon=True).start()
