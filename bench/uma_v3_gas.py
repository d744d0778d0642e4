"""Gas per assertion on UMA's real Optimistic Oracle V3: one `assertTruth` transaction per
claim against N claims in one `multicall` transaction, through `UmaAsserter`.

Run: .venv/bin/python bench/uma_v3_gas.py [--sizes 1,2,5,10]

Deploys UMA's contracts (compiled from @uma/core) on a local anvil, approves the bond
currency once, then for each size N asserts N claims one transaction each and N claims in
one multicall, and prints the gas used per claim. Every claim is new (its own slot in
`assertions`), so both sides pay the same storage; the allowance is warm for both.
"""

from __future__ import annotations

import argparse
import asyncio

from oracle.chain.erc20 import TESTNET_ERC20, Erc20
from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.core.claims import assertion_claim
from oracle.devchain import DEV_KEYS, Anvil, anvil_binary
from oracle.venues.uma.binding_v3 import Claim, OptimisticOracleV3, UmaAsserter
from oracle.venues.uma.stack import deploy_optimistic_oracle_v3, deploy_uma_stack

FINAL_FEE = 5 * 10**18
LIVENESS = 7200


def claim(currency: str, bond: int, name: str) -> Claim:
    text = assertion_claim(
        market_id=name,
        question=f"Did the event behind market {name} happen before 1 June 2026?",
        outcome="YES",
        proof_checksum="cd" * 32,
    )
    return Claim(text=text, bond=bond, liveness=LIVENESS, currency=currency)


async def measure(anvil: Anvil, sizes: list[int]) -> None:
    pool = RpcPool([anvil.url], RpcSettings())
    await pool.start()
    manager = TxManager(
        pool,
        LocalSigner(DEV_KEYS[0]),
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.05),
    )
    try:
        stack = await deploy_uma_stack(manager, liveness=LIVENESS, final_fee=FINAL_FEE)
        address = await deploy_optimistic_oracle_v3(manager, stack, liveness=LIVENESS)
        oracle = OptimisticOracleV3(pool, address)
        bond = await oracle.minimum_bond(stack.currency)
        token = Erc20(pool, stack.currency)
        await manager.submit(
            TxRequest(
                key="fund",
                to=stack.currency,
                data=token.encode("allocateTo", manager.address, 10**30),
            )
        )
        asserter = UmaAsserter(manager, oracle)
        await asserter.assert_truth(claim(stack.currency, bond, "warm-up"))  # the approval
        print(f"UMA OOv3 ({TESTNET_ERC20} bond {bond / 10**18:g}), gas per claim")
        print(f"  {'claims':>6} {'one tx each':>12} {'one multicall':>14} {'saved':>7}")
        for size in sizes:
            singles = [
                await asserter.assert_truth(claim(stack.currency, bond, f"s{size}-{i}"))
                for i in range(size)
            ]
            single = sum(s.intent.inclusion.gas_used for s in singles if s.intent.inclusion)
            claims = [claim(stack.currency, bond, f"b{size}-{i}") for i in range(size)]
            batch = await asserter.assert_many(claims, f"bench-{size}")
            inclusion = batch[0].intent.inclusion
            together = inclusion.gas_used if inclusion else 0
            saved = 1 - together / single
            print(f"  {size:>6} {single / size:>12,.0f} {together / size:>14,.0f} {saved:>7.1%}")
    finally:
        await manager.close()
        await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,5,10", help="claims per comparison")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    try:
        asyncio.run(measure(anvil, sizes))
    finally:
        anvil.stop()


if __name__ == "__main__":
    main()
