"""Gas the `uma_v3` venue spends asserting N claim markets due together: one `multicall`
(`batch_window`, the default) against one transaction per assertion (`batch_window: 0`).

Run: .venv/bin/python bench/uma_v3_venue_gas.py [--markets 5]

Deploys UMA's contracts (compiled from @uma/core) around an OptimisticOracleV3 on a local
anvil, then runs the daemon twice (`oracle run --once`'s pass, replay agents agreeing on
YES, an SQLite database each), on N new claim markets each time, and prints the gas of the
daemon's assertion transactions from their receipts. Each transaction is preceded by an
approval of exactly its bonds (not counted: it is not an assertion).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import yaml

from oracle.app import assemble
from oracle.chain.contracts import Deployment
from oracle.chain.erc20 import Erc20
from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.config import load_settings
from oracle.devchain import DEV_KEYS, Anvil, anvil_binary
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import OPTIMISTIC_ORACLE_V3
from oracle.venues.uma.stack import deploy_optimistic_oracle_v3, deploy_uma_stack

FINAL_FEE = 5 * 10**18
LIVENESS = 7200
AGENTS = ("alpha", "beta", "gamma")
VOTES = (("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6))


async def deploy(anvil: Anvil, directory: Path) -> tuple[Path, str, str]:
    """The deployment file, the oracle's address and the daemon's account (funded)."""
    pool = RpcPool([anvil.url], RpcSettings())
    await pool.start()
    manager = TxManager(
        pool,
        LocalSigner(DEV_KEYS[0]),
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.05),
    )
    try:
        block = int(anvil.rpc("eth_blockNumber"), 16)
        stack = await deploy_uma_stack(manager, liveness=LIVENESS, final_fee=FINAL_FEE)
        oracle = await deploy_optimistic_oracle_v3(manager, stack, liveness=LIVENESS)
        daemon = LocalSigner(DEV_KEYS[1]).address
        token = Erc20(pool, stack.currency)
        await manager.submit(
            TxRequest(
                key="fund", to=stack.currency, data=token.encode("allocateTo", daemon, 10**30)
            )
        )
        deployment = Deployment(
            chain_id=manager.chain_id,
            block_number=block,
            deployer=manager.address,
            contracts={**stack.contracts(), OPTIMISTIC_ORACLE_V3: oracle},
        )
    finally:
        await manager.close()
        await pool.close()
    path = directory / "deployment.json"
    deployment.save(path)
    return path, oracle, daemon


def run_daemon(
    anvil: Anvil, directory: Path, deployment: Path, batch_window: float, n: int
) -> None:
    """One daemon pass over `n` new claim markets (recordings written for the agents)."""
    replays = directory / f"replays-{batch_window:g}"
    replays.mkdir()
    markets = []
    for i in range(n):
        question = f"Did benchmark event {batch_window:g}-{i} happen before 1 June 2026?"
        markets.append(
            {
                "id": f"w{batch_window:g}-{i}",
                "question": question,
                "resolve_after": "2020-01-01T00:00:00Z",
            }
        )
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in VOTES],
            market_id=f"m{i}",
            question=question,
            outcomes=["YES", "NO"],
        )
        (replays / f"{i}.json").write_text(json.dumps(document))
    config: dict[str, Any] = {
        "database": {"url": f"sqlite:///{directory / f'oracle-{batch_window:g}.db'}"},
        "daemon": {"proofs_dir": str(directory / "proofs")},
        "consensus": {"agent_timeout": 5},
        "log": {"level": "WARNING"},
        "metrics": {"enabled": False},
        "agents": [{"name": a, "kind": "replay", "directory": str(replays)} for a in AGENTS],
        "market_sources": [
            {
                "kind": "uma_v3",
                "deployment_file": str(deployment),
                "markets": markets,
                "batch_window": batch_window,
            }
        ],
        "chains": [
            {
                "name": "default",
                "rpc": {"urls": [anvil.url]},
                "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[1]},
                "tx": {"confirmations": 1, "poll_interval": 0.05},
                "scanner": {"confirmations": 0},
            }
        ],
    }
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))

    async def once() -> None:
        assembly = assemble(load_settings(path))
        try:
            await assembly.daemon.run_once()
        finally:
            await assembly.close()

    asyncio.run(once())


def assertion_gas(anvil: Anvil, sender: str, oracle: str, seen: set[str]) -> list[int]:
    """Gas of `sender`'s transactions to the oracle not counted yet."""
    found = []
    for receipt in anvil.receipts_in_chain():
        if receipt["transactionHash"] in seen or receipt["from"].lower() != sender.lower():
            continue
        if (receipt["to"] or "").lower() == oracle.lower():
            seen.add(receipt["transactionHash"])
            found.append(int(receipt["gasUsed"], 16))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markets", type=int, default=5, help="claim markets due together")
    n = parser.parse_args().markets
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    try:
        with tempfile.TemporaryDirectory() as temporary:
            directory = Path(temporary)
            deployment, oracle, daemon = asyncio.run(deploy(anvil, directory))
            seen: set[str] = set()
            results = {}
            for window in (0.0, 2.0):  # one each first: it also pays the approval
                run_daemon(anvil, directory, deployment, window, n)
                results[window] = assertion_gas(anvil, daemon, oracle, seen)
    finally:
        anvil.stop()
    single, batch = results[0.0], results[2.0]
    print(f"uma_v3 venue, {n} claim markets due together: gas of the assertions")
    print(f"  batch_window 0: {len(single)} transactions, {sum(single):,} gas ({single})")
    print(f"  batch_window 2: {len(batch)} transaction(s), {sum(batch):,} gas ({batch})")
    # The first assertion on a fresh oracle writes storage the later ones find warm.
    steady = single[-1]
    print(
        f"  per claim: {sum(single) / n:,.0f} one transaction each ({steady:,} after the "
        f"first) against {sum(batch) / n:,.0f} in one multicall: "
        f"{1 - sum(batch) / sum(single):.1%} less ({1 - sum(batch) / n / steady:.1%} against "
        f"{steady:,})"
    )


if __name__ == "__main__":
    main()
