"""What the chain venues' end-to-end tests (UMA V2, UMA V3, Reality.eth) do alike: one
daemon pass over a venue, its gauges and intents, and a daemon killed between broadcasting
a transaction and its confirmation, then restarted."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml

from oracle.app import assemble
from oracle.config import Settings, load_settings
from oracle.daemon.metrics import DaemonMetrics
from oracle.store.repository import Store

from ..anvil import Anvil
from .chain_world import start_daemon
from .test_restart_transactions import pending_hashes, wait_for

# Quick polls and a short lease, so that a restarted daemon takes its work over at once.
CRASH_DAEMON = {"poll_interval": 0.3, "dispatch_interval": 0.2, "lease_margin": 1}


def one_pass(settings: Settings, metrics: DaemonMetrics | None = None) -> None:
    async def run() -> None:
        assembly = assemble(settings, metrics=metrics)
        try:
            await assembly.daemon.run_once()
        finally:
            await assembly.close()

    asyncio.run(run())


def gauge(metrics: DaemonMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def intent_keys(store: Store) -> list[str]:
    from sqlalchemy import text  # noqa: PLC0415

    with store.engine.connect() as connection:
        return [row[0] for row in connection.execute(text("SELECT key FROM tx_intent"))]


def start_once(tmp_path: Path, rpc_url: str, signer_key: str, source: dict[str, Any]) -> None:
    """Assemble a daemon over the one market `source` and start it, then close it: how a
    venue's setup problem shows (a SetupError naming the setting)."""
    config = {
        "database": {"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        "daemon": {"proofs_dir": str(tmp_path / "proofs")},
        "metrics": {"enabled": False},
        "market_sources": [source],
        "chain": {
            "rpc": {"urls": [rpc_url]},
            "signer": {"type": "dev_private_key", "dev_private_key": signer_key},
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    assembly = assemble(load_settings(path))

    async def run() -> None:
        try:
            await assembly.daemon.start()
        finally:
            await assembly.close()

    asyncio.run(run())


def kill_once_broadcast(
    anvil: Anvil, signer: str, config: Path, log: Path, what: str, *, approval: bool = False
) -> None:
    """Run the daemon with mining off and kill it (SIGKILL) as soon as `signer` broadcast
    `what`, left unmined. With `approval`, the daemon first sends an allowance it waits
    for: that one is mined, then `what` follows."""
    anvil.rpc("evm_setAutomine", False)
    daemon = start_daemon(config, log)
    try:
        mined: list[str] = []
        if approval:
            wait_for(lambda: len(pending_hashes(anvil, signer)) == 1, 60, "the approval")
            mined = pending_hashes(anvil, signer)
            anvil.mine()
        wait_for(lambda: pending_hashes(anvil, signer) not in ([], mined), 60, what)
    finally:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(timeout=10)


def restart_until(
    anvil: Anvil, config: Path, log: Path, done: Callable[[], bool], what: str
) -> None:
    """Mine again, restart the daemon, wait until `done()`, and stop it cleanly."""
    anvil.rpc("evm_setAutomine", True)
    anvil.rpc("evm_setIntervalMining", 1)
    daemon = start_daemon(config, log)
    try:
        wait_for(done, 90, what)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
    assert daemon.returncode == 0, log.read_text()[-3000:]


# --- the chain's time, as the venues' tests ask and warp it ---------------------------------


def chain_time(anvil: Anvil) -> int:
    return int(anvil.rpc("eth_getBlockByNumber", "latest", False)["timestamp"], 16)


def warp_to(anvil: Anvil, moment: float) -> None:
    anvil.rpc("evm_increaseTime", int(moment) - chain_time(anvil))
    anvil.mine()


def et_deadline(moment: float) -> tuple[str, float]:
    """The day of `moment` in New York as Polymarket writes a deadline, and its epoch."""
    new_york = ZoneInfo("America/New_York")
    day = datetime.fromtimestamp(moment, new_york)
    end = day.replace(hour=23, minute=59, second=0, microsecond=0)
    return f"{end:%B} {end.day}, {end.year}, 11:59 PM ET", end.timestamp()
