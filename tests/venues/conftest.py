"""One anvil for the module, started only when a chain kind's world first needs it, and
one world per venue kind on it (`worlds.py`); each test on a database of its own."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from oracle.store.database import open_database

from ..anvil import Anvil, anvil_binary, free_port
from .worlds import KINDS, VenueWorld, make_world


@pytest.fixture(scope="module")
def module_anvil() -> Iterator[Callable[[], Anvil]]:
    started: list[Anvil] = []

    def node() -> Anvil:
        if not started:
            binary = anvil_binary()
            if binary is None:
                pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
            anvil = Anvil(binary, [], None)
            for attempt in range(3):
                try:
                    anvil.start()
                    break
                except RuntimeError:
                    if attempt == 2:
                        raise
                    anvil.port = free_port()
            started.append(anvil)
        return started[0]

    yield node
    for anvil in started:
        anvil.stop(signal.SIGKILL)


@pytest.fixture(scope="module", params=KINDS)
def world(
    request: pytest.FixtureRequest,
    module_anvil: Callable[[], Anvil],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[VenueWorld]:
    made = make_world(request.param, module_anvil, tmp_path_factory.mktemp(request.param))
    yield made
    made.close()


@pytest.fixture(scope="module")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite database at the newest schema, made once: each test copies it
    rather than migrating its own (a third of a second per venue made)."""
    path = tmp_path_factory.mktemp("template") / "oracle.db"
    open_database(f"sqlite:///{path}", create=True).dispose()
    return path


@pytest.fixture
def database(tmp_path: Path, migrated_database: Path) -> str:
    """The URL of this test's own database, migrated already."""
    for made in migrated_database.parent.glob(f"{migrated_database.name}*"):
        shutil.copy(made, tmp_path / made.name)
    return f"sqlite:///{tmp_path / migrated_database.name}"
