"""Gas per proposal on UMA's Optimistic Oracle V2: through the daemon against bare
`proposePrice` transactions, on the same anvil chain.

Deploys UMA's real contracts (from `@uma/core`) and `UmaStyleRequester` on a local anvil,
asks `--questions` questions the way Polymarket's adapter does and lets the daemon (replay
agents, SQLite) answer them in one pass; then asks as many again and proposes each with a
bare `proposePrice` from another account. The daemon approves exactly each bond before it
(no `risk.bond_allowance`); the bare account approves the oracle once, first.
Prints the gas of each kind from the transactions' receipts.

    .venv/bin/python bench/uma_gas.py [--questions N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import yaml

from oracle.app import assemble, open_store
from oracle.chain.contracts import Deployment, encode_call
from oracle.chain.intents import InMemoryIntentStore, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.config import load_settings
from oracle.core.ancillary import PRICE_SCALE, parse_ancillary
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS, Anvil, anvil_binary
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import (
    MAX_UINT256,
    OPTIMISTIC_ORACLE_V2,
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    RequestKey,
    identifier_bytes,
)
from oracle.venues.uma.stack import (
    UmaStack,
    ask_like_polymarket,
    deploy_style_requester,
    deploy_uma_stack,
)

BOND, REWARD, FINAL_FEE = 100 * 10**18, 2 * 10**18, 5 * 10**18
AGENTS = ("alpha", "beta", "gamma")
DEPLOYER, ASKER, DAEMON, BARE = 0, 1, 2, 3


async def manager(url: str, slot: int) -> TxManager:
    pool = RpcPool([url], RpcSettings())
    await pool.start()
    return TxManager(
        pool,
        LocalSigner(DEV_KEYS[slot]),
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.05),
    )


async def close(*managers: TxManager) -> None:
    for m in managers:
        await m.close()
        await m.pool.close()


async def send(m: TxManager, key: str, name: str, to: str, function: str, *args: Any) -> int:
    intent = await m.submit(TxRequest(key=key, to=to, data=encode_call(name, function, *args)))
    if intent.state != IntentState.CONFIRMED or intent.inclusion is None:
        raise SystemExit(f"{key}: {intent.state.value} {intent.error}")
    return intent.inclusion.gas_used


async def set_up(url: str) -> tuple[UmaStack, str, Deployment]:
    deployer = await manager(url, DEPLOYER)
    try:
        stack = await deploy_uma_stack(deployer, final_fee=FINAL_FEE)
        requester = await deploy_style_requester(deployer, stack)
        for account in (requester, DEV_ADDRESSES[DAEMON], DEV_ADDRESSES[BARE]):
            amount = 10**6 * BOND
            await send(
                deployer,
                f"fund:{account}",
                TESTNET_ERC20,
                stack.currency,
                "allocateTo",
                account,
                amount,
            )
        deployment = Deployment(
            chain_id=deployer.chain_id,
            block_number=0,
            deployer=deployer.address,
            contracts=stack.contracts(),
        )
    finally:
        await close(deployer)
    return stack, requester, deployment


async def ask_many(url: str, requester: str, count: int, first: int) -> list[RequestKey]:
    asker = await manager(url, ASKER)
    keys = []
    try:
        for index in range(first, first + count):
            question = (
                f"q: title: Did bench event {index} happen?, description: As reported. "
                "res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to "
                "unknown/50-50."
            )
            asked = await ask_like_polymarket(asker, requester, question, reward=REWARD, bond=BOND)
            keys.append(
                RequestKey(
                    asked.requester,
                    identifier_bytes(YES_OR_NO_QUERY),
                    asked.timestamp,
                    asked.ancillary_data,
                )
            )
    finally:
        await close(asker)
    return keys


def daemon_pass(directory: Path, url: str, deployment_file: Path, keys: list[RequestKey]) -> None:
    replays = directory / "replays"
    replays.mkdir()
    for key in keys:
        votes = [result_dict(agent, "YES", 0.9) for agent in AGENTS]
        text = parse_ancillary(key.ancillary_data).text
        document = consensus_document(votes, market_id=key.id_hex, question=text)
        (replays / f"{key.id_hex}.json").write_text(json.dumps(document))
    config = {
        "database": {"url": f"sqlite:///{directory / 'oracle.db'}"},
        "daemon": {"proofs_dir": str(directory / "proofs")},
        "metrics": {"enabled": False},
        "log": {"level": "WARNING"},
        "agents": [{"name": a, "kind": "replay", "directory": str(replays)} for a in AGENTS],
        "market_sources": [{"kind": "uma", "name": "uma", "deployment_file": str(deployment_file)}],
        "chains": [
            {
                "name": "default",
                "rpc": {"urls": [url]},
                "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[DAEMON]},
                "tx": {"confirmations": 1, "poll_interval": 0.05},
                "scanner": {"confirmations": 0},
            }
        ],
    }
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    settings = load_settings(path)

    async def run() -> None:
        assembly = assemble(settings)
        try:
            await assembly.daemon.run_once()
        finally:
            await assembly.close()

    asyncio.run(run())
    store = open_store(settings)
    try:
        states = {m.state for m in store.markets()}
    finally:
        store.engine.dispose()
    if states != {"submitted"}:
        raise SystemExit(f"the daemon did not propose on every request: {states}")


def receipts_of(anvil: Anvil, sender: str) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if r["from"].lower() == sender.lower()]


async def bare(url: str, stack: UmaStack, keys: list[RequestKey]) -> tuple[int, list[int]]:
    proposer = await manager(url, BARE)
    oracle = stack.optimistic_oracle
    try:
        approval = await send(
            proposer, "approve", TESTNET_ERC20, stack.currency, "approve", oracle, MAX_UINT256
        )
        gas = [
            await send(
                proposer,
                f"propose:{key.id_hex}",
                OPTIMISTIC_ORACLE_V2,
                oracle,
                "proposePrice",
                *key.args,
                PRICE_SCALE,
            )
            for key in keys
        ]
    finally:
        await close(proposer)
    return approval, gas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=5, help="proposals of each kind")
    args = parser.parse_args()
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            directory = Path(scratch)
            stack, requester, deployment = asyncio.run(set_up(anvil.url))
            deployment_file = directory / "uma-deployment.json"
            deployment.save(deployment_file)
            daemon_keys = asyncio.run(ask_many(anvil.url, requester, args.questions, 0))
            daemon_pass(directory, anvil.url, deployment_file, daemon_keys)
            daemon = receipts_of(anvil, DEV_ADDRESSES[DAEMON])
            daemon_approvals = [
                int(r["gasUsed"], 16)
                for r in daemon
                if (r["to"] or "").lower() == stack.currency.lower()
            ]
            daemon_proposals = [
                int(r["gasUsed"], 16)
                for r in daemon
                if (r["to"] or "").lower() == stack.optimistic_oracle.lower()
            ]
            bare_keys = asyncio.run(ask_many(anvil.url, requester, args.questions, args.questions))
            bare_approval, bare_proposals = asyncio.run(bare(anvil.url, stack, bare_keys))
    finally:
        anvil.stop()
    n = args.questions
    print(f"UMA OOv2 on anvil, {n} proposals of each kind (gas from receipts)")
    print(f"  {'':<26} {'approvals':>10} {'per proposal':>13} {'min':>8} {'max':>8}")
    for name, approvals, proposals in (
        ("through the daemon", daemon_approvals, daemon_proposals),
        ("bare proposePrice", [bare_approval], bare_proposals),
    ):
        print(
            f"  {name:<26} {sum(approvals):>10} {statistics.mean(proposals):>13.0f} "
            f"{min(proposals):>8} {max(proposals):>8}"
        )
    total_daemon = (sum(daemon_approvals) + sum(daemon_proposals)) / n
    total_bare = (bare_approval + sum(bare_proposals)) / n
    print(f"  with the approval spread over the {n}: {total_daemon:.0f} vs {total_bare:.0f}")


if __name__ == "__main__":
    main()
