"""What the venue demos (`demo_uma.py`, `demo_reality.py`) share: a fresh home and anvil,
the daemon run as a process beside it, the dev accounts' transaction managers, and the
market as the daemon's database shows it."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager
from oracle.devchain import DEV_KEYS, Anvil, anvil_binary
from oracle.errors import OracleError
from oracle.store.database import open_database
from oracle.store.repository import Store


async def dev_manager(url: str, slot: int) -> TxManager:
    """A transaction manager for anvil's dev account `slot`."""
    pool = RpcPool([url], RpcSettings())
    await pool.start()
    return TxManager(
        pool, LocalSigner(DEV_KEYS[slot]), InMemoryIntentStore(), TxSettings(confirmations=1)
    )


async def close_manager(manager: TxManager) -> None:
    await manager.close()
    await manager.pool.close()


def stored_market(home: Path, market_id: str) -> tuple[str | None, dict[str, Any]]:
    """The market's state and submission in the daemon's database (None until stored),
    with the final outcome of the accuracy ledger under `final_outcome` once final."""
    if not (home / "oracle.db").exists():
        return None, {}
    try:
        store = Store(open_database(f"sqlite:///{home / 'oracle.db'}", create=False))
    except OracleError:  # the daemon is still creating its schema
        return None, {}
    try:
        row = next((m for m in store.markets() if m.id == market_id), None)
        if row is None:
            return None, {}
        final = store.final_outcome(market_id)
        outcome = {"final_outcome": final.outcome} if final is not None else {}
        return row.state, {**row.submission, **outcome}
    except Exception:  # a table not created yet
        return None, {}
    finally:
        store.engine.dispose()


@dataclass
class DemoRun:
    """The demo's home, its anvil, and the daemon once started (`start_daemon`)."""

    home: Path
    chain: Anvil
    daemon: subprocess.Popen[bytes] | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.home / "daemon.log"

    def start_daemon(self, config: Path) -> None:
        self.daemon = subprocess.Popen(
            [sys.executable, "-m", "oracle", "run", "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
        )

    def wait_for(self, what: str, check: Any) -> None:
        """Until `check()`; the demo ends with a message if the daemon exits first or two
        minutes pass."""
        assert self.daemon is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                sys.exit(f"demo: the daemon exited with {self.daemon.returncode}; log: {self.log}")
            if check():
                return
            time.sleep(0.5)
        sys.exit(f"demo: timed out waiting for {what}; log: {self.log}")


@contextmanager
def demo_run(home: Path) -> Iterator[DemoRun]:
    """A fresh `home` and anvil for one demo; the daemon stopped (SIGTERM) and anvil
    killed when it ends."""
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    binary = anvil_binary()
    if binary is None:
        sys.exit("demo: anvil not found; ./scripts/demo installs it (or install Foundry)")
    chain = Anvil(binary, [], None)
    chain.start()
    run = DemoRun(home, chain)
    try:
        yield run
    finally:
        if run.daemon is not None and run.daemon.poll() is None:
            run.daemon.send_signal(signal.SIGTERM)
            run.daemon.wait(timeout=60)
        chain.stop(signal.SIGKILL)
