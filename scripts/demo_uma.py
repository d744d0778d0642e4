"""The demo of the daemon on UMA's Optimistic Oracle V2: a question asked the way
Polymarket's adapter asks it, researched by `replay` agents, answered by proposing a price
with a bond, and settled once the liveness has passed.

UMA's real contracts (from `@uma/core`) and the test requester `UmaStyleRequester` are
deployed on a local anvil; everything lives under data/demo-uma/. Run it after setup
(`./scripts/demo` or `./scripts/test` install what it needs):

    .venv/bin/python scripts/demo_uma.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from _demo_chain import close_manager, demo_run, dev_manager, stored_market
from eth_abi import decode as abi_decode

from oracle.chain.contracts import Deployment, encode_call
from oracle.chain.intents import IntentState
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings
from oracle.chain.txmanager import TxRequest
from oracle.core.ancillary import parse_ancillary
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import (
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    OptimisticOracleV2,
    RequestKey,
    RequestView,
    identifier_bytes,
)
from oracle.venues.uma.stack import ask_like_polymarket, deploy_style_requester, deploy_uma_stack
from oracle.venues.uma.venue import outcome_of_price

ROOT = Path(__file__).resolve().parent.parent
LIVENESS = 7200  # OOv2's usual two hours, passed on the chain's clock
BOND, REWARD, FINAL_FEE = 100 * 10**18, 2 * 10**18, 5 * 10**18
QUESTION = (
    "q: title: Did the demo launch happen before the deadline?, description: This market "
    'will resolve to "Yes" if the launch happened before the deadline, June 1, 2025, '
    '11:59 PM ET. Otherwise, this market will resolve to "No". '
    "res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to "
    "unknown/50-50."
)
AGENTS = (("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6))
ASKER, PROPOSER = 1, 2


async def deploy_and_ask(url: str, home: Path) -> tuple[RequestKey, Path, str]:
    """UMA's system, the requester (funded), the proposer funded; one question asked."""
    deployer = await dev_manager(url, 0)
    try:
        stack = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
        requester = await deploy_style_requester(deployer, stack)
        for account in (requester, DEV_ADDRESSES[PROPOSER]):
            intent = await deployer.submit(
                TxRequest(
                    key=f"fund:{account}",
                    to=stack.currency,
                    data=encode_call(TESTNET_ERC20, "allocateTo", account, 10 * BOND),
                )
            )
            if intent.state != IntentState.CONFIRMED:
                sys.exit(f"demo: funding {account} failed: {intent.error}")
        deployment = Deployment(
            chain_id=deployer.chain_id,
            block_number=0,
            deployer=deployer.address,
            contracts=stack.contracts(),
        )
    finally:
        await close_manager(deployer)
    deployment_file = home / "uma-deployment.json"
    deployment.save(deployment_file)
    asker = await dev_manager(url, ASKER)
    try:
        asked = await ask_like_polymarket(asker, requester, QUESTION, reward=REWARD, bond=BOND)
    finally:
        await close_manager(asker)
    key = RequestKey(
        asked.requester, identifier_bytes(YES_OR_NO_QUERY), asked.timestamp, asked.ancillary_data
    )
    return key, deployment_file, stack.optimistic_oracle


def write_config(home: Path, url: str, deployment_file: Path, key: RequestKey) -> Path:
    replays = home / "replays"
    replays.mkdir()
    document = consensus_document(
        [result_dict(agent, outcome, conf) for agent, outcome, conf in AGENTS],
        market_id="demo-uma",
        question=parse_ancillary(key.ancillary_data).text,
    )
    (replays / "demo-uma.json").write_text(json.dumps(document))
    config: dict[str, Any] = {
        "database": {"url": f"sqlite:///{home / 'oracle.db'}"},
        "daemon": {"proofs_dir": str(home / "proofs"), "poll_interval": 1, "watch_interval": 1},
        "metrics": {"enabled": False},
        "log": {"format": "json"},
        "agents": [
            {"name": agent, "kind": "replay", "directory": str(replays)} for agent, _, _ in AGENTS
        ],
        "market_sources": [
            {
                "kind": "uma",
                "name": "uma",
                "deployment_file": str(deployment_file),
                "requesters": [key.requester],
                "risk": {"max_bond_outstanding": 1000, "max_bond_per_request": 500},
            }
        ],
        "chains": [
            {
                "name": "default",
                "rpc": {"urls": [url]},
                "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[PROPOSER]},
                "tx": {"confirmations": 1},
                "scanner": {"confirmations": 0, "poll_interval": 1},
            }
        ],
    }
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def token(chain: Any, address: str) -> tuple[str, int]:
    """An ERC-20's symbol and decimals, read from the chain."""

    def call(selector: str) -> bytes:
        answer = chain.rpc("eth_call", {"to": address, "data": selector}, "latest")
        return bytes.fromhex(answer.removeprefix("0x"))

    (symbol,) = abi_decode(["string"], call("0x95d89b41"))  # symbol()
    (decimals,) = abi_decode(["uint8"], call("0x313ce567"))  # decimals()
    return str(symbol), int(decimals)


def units(amount: int, decimals: int) -> str:
    """`amount` of the smallest unit as a decimal number of whole units, exactly."""
    whole, fraction = divmod(amount, 10**decimals)
    digits = str(fraction).rjust(decimals, "0").rstrip("0")
    return f"{whole}.{digits}" if digits else str(whole)


def request_view(url: str, oracle: str, key: RequestKey) -> RequestView:
    async def read() -> RequestView:
        pool = RpcPool([url], RpcSettings())
        await pool.start()
        try:
            return await OptimisticOracleV2(pool, oracle).get_request(key)
        finally:
            await pool.close()

    return asyncio.run(read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=ROOT / "data" / "demo-uma")
    args = parser.parse_args()
    home: Path = args.home
    with demo_run(home) as run:
        chain = run.chain
        key, deployment_file, oracle = asyncio.run(deploy_and_ask(chain.url, home))
        print(f"1. UMA's OptimisticOracleV2 at {oracle} on anvil ({chain.url})")
        print(f"2. asked as Polymarket's adapter asks: request {key.id_hex}")
        config = write_config(home, chain.url, deployment_file, key)
        run.start_daemon(config)
        log = run.log
        market_id = f"uma:{key.id_hex}"
        run.wait_for("the proposal", lambda: stored_market(home, market_id)[0] == "submitted")
        view = request_view(chain.url, oracle, key)
        symbol, decimals = token(chain, view.currency)
        question = parse_ancillary(key.ancillary_data)
        # Prices are fixed-point with 18 decimals (UMA's YES_OR_NO_QUERY: 1 is p2, YES).
        proposed = outcome_of_price(question, view.proposed_price)
        print(
            f"3. the daemon proposed: state {view.state.name}, price "
            f"{units(view.proposed_price, 18)} ({proposed}), "
            f"bond {units(view.total_bond, decimals)} {symbol} posted by {view.proposer}"
        )
        chain.rpc("evm_increaseTime", LIVENESS + 1)
        chain.mine()
        run.wait_for(
            "settlement", lambda: request_view(chain.url, oracle, key).state.name == "SETTLED"
        )
        view = request_view(chain.url, oracle, key)
        print(
            f"4. after the liveness: market {stored_market(home, market_id)[0]}, request "
            f"{view.state.name} at price {units(view.resolved_price, 18)} "
            f"({outcome_of_price(question, view.resolved_price)})"
        )
        print(f"   proofs: {home / 'proofs'}   config: {config}   log: {log}")


if __name__ == "__main__":
    main()
