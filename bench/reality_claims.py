"""Gas of claiming Reality.eth questions one by one against one batched transaction, on
anvil with the real contracts (RealityETH_v3_0, Realitio_v2_1, RealityETH_ERC20_v3_0).

Run: .venv/bin/python bench/reality_claims.py [--sizes 1 4 8] [--contract v3|v2.1|erc20|all]

For each size n: n finalized questions, each answered by us, countered by another
account and defended by us (three answers: the common shape of a claim), then claimed
two ways on two copies of the same chain state (an anvil snapshot, reverted between):

- one by one: `claimWinnings` then `withdraw`, per question (what `claim_batch: 1` sends);
- batched: one `claimMultipleAndWithdrawBalance` of all n (`claim_batch` >= n).

It prints the gas of each way from the receipts, per question, and checks that both paid
us exactly the same amount.
"""

from __future__ import annotations

import argparse
import asyncio

from oracle.chain.contracts import encode_call
from oracle.chain.deploy import creation_code
from oracle.chain.erc20 import TESTNET_ERC20
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.devchain import DEV_KEYS, Anvil, anvil_binary
from oracle.venues.reality.binding import (
    RealityAnswerer,
    ask_question,
    deploy_reality,
    reality_contract,
)
from oracle.venues.reality.rules import QuestionKind, encode_question_text

BOND = 10**16
TIMEOUT = 3600
YES = b"\x00" * 31 + b"\x01"
NO = b"\x00" * 32
CONTRACTS = {"v3": ("v3", False), "v2.1": ("v2.1", False), "erc20": ("v3", True)}


def gas(intent: Intent | None) -> int:
    if intent is None or intent.inclusion is None:
        return 0
    if intent.state != IntentState.CONFIRMED:
        raise SystemExit(f"{intent.key} ended {intent.state.value}: {intent.error}")
    return intent.inclusion.gas_used


async def make_manager(url: str, key: str) -> TxManager:
    pool = RpcPool([url], RpcSettings())
    await pool.start()
    return TxManager(
        pool,
        LocalSigner(key),
        InMemoryIntentStore(),  # fresh per run: a reverted snapshot forgets the intents
        TxSettings(confirmations=1, poll_interval=0.02),
    )


async def token_for(deployer: TxManager, holders: list[str]) -> str:
    intent = await deployer.submit(
        TxRequest(key="token", to=None, data=creation_code(TESTNET_ERC20, "Bond", "BOND", 18))
    )
    if intent.inclusion is None or intent.inclusion.contract_address is None:
        raise SystemExit("the bond token was not deployed")
    token = intent.inclusion.contract_address
    for holder in holders:
        gas(
            await deployer.submit(
                TxRequest(
                    key=f"mint:{holder}",
                    to=token,
                    data=encode_call(TESTNET_ERC20, "allocateTo", holder, 10**24),
                )
            )
        )
    return str(token)


async def prepare(anvil: Anvil, kind: str, size: int) -> tuple[str, str | None, list[bytes]]:
    """`size` questions on a new contract, each ours, countered, defended, finalized."""
    version, erc20 = CONTRACTS[kind]
    managers = [await make_manager(anvil.url, DEV_KEYS[i]) for i in range(3)]
    try:
        asker, ours, theirs = managers
        token = await token_for(asker, [ours.address, theirs.address]) if erc20 else None
        reality = await deploy_reality(
            asker, run=f"{kind}:{size}", version=version, bond_token=token
        )
        contract = reality_contract(asker.pool, reality, version=version, bond_token=token)
        us = RealityAnswerer(
            ours, reality_contract(ours.pool, reality, version=version, bond_token=token)
        )
        them = RealityAnswerer(
            theirs, reality_contract(theirs.pool, reality, version=version, bond_token=token)
        )
        questions = []
        for number in range(size):
            qid = await ask_question(
                asker,
                reality,
                template_id=0,
                text=encode_question_text(QuestionKind.BOOL, f"Claim bench {number}?"),
                arbitrator=asker.address,
                timeout=TIMEOUT,
                nonce=number,
                contract=contract,
            )
            gas((await us.answer(qid, YES, bond=BOND)).intent)
            gas((await them.answer(qid, NO)).intent)
            gas((await us.answer(qid, YES)).intent)
            questions.append(qid)
        anvil.rpc("evm_increaseTime", TIMEOUT + 1)
        anvil.mine()
        return reality, token, questions
    finally:
        for manager in managers:
            await manager.close()
            await manager.pool.close()


async def claim(
    anvil: Anvil,
    kind: str,
    reality: str,
    token: str | None,
    questions: list[bytes],
    *,
    batched: bool,
) -> tuple[int, int]:
    """(gas, amount paid out) of claiming `questions` one way."""
    version, _ = CONTRACTS[kind]
    manager = await make_manager(anvil.url, DEV_KEYS[1])
    try:
        us = RealityAnswerer(
            manager, reality_contract(manager.pool, reality, version=version, bond_token=token)
        )
        if batched:
            outcome = await us.claim_many([(q, 0) for q in questions])
            return sum(gas(i) for i in outcome.intents), outcome.withdrawn
        used = paid = 0
        for qid in questions:  # what claim_batch: 1 sends: claimWinnings, withdraw, each
            claimed = await us.claim(qid)
            if claimed is None:
                raise SystemExit(f"0x{qid.hex()} is not finalized")
            used += gas(claimed.claim) + gas(claimed.withdraw)
            paid += claimed.withdrawn
        return used, paid
    finally:
        await manager.close()
        await manager.pool.close()


async def measure(anvil: Anvil, kinds: list[str], sizes: list[int]) -> None:
    print("gas from receipts on anvil; each question: our answer, a counter-answer, our defence")
    print(
        f"  {'contract':<8} {'questions':>9} {'one by one':>11} {'per q':>7} {'batched':>9} "
        f"{'per q':>7} {'saved':>6}"
    )
    for kind in kinds:
        for size in sizes:
            reality, token, questions = await prepare(anvil, kind, size)
            snapshot = anvil.rpc("evm_snapshot")
            single, paid_single = await claim(anvil, kind, reality, token, questions, batched=False)
            anvil.rpc("evm_revert", snapshot)
            batch, paid_batch = await claim(anvil, kind, reality, token, questions, batched=True)
            if paid_single != paid_batch:
                raise SystemExit(
                    f"{kind} x{size}: paid {paid_single} one by one, {paid_batch} batched"
                )
            saved = 1 - batch / single
            print(
                f"  {kind:<8} {size:>9} {single:>11} {single / size:>7.0f} {batch:>9} "
                f"{batch / size:>7.0f} {saved:>6.0%}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--contract", choices=[*CONTRACTS, "all"], default="all")
    args = parser.parse_args()
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    kinds = list(CONTRACTS) if args.contract == "all" else [args.contract]
    try:
        asyncio.run(measure(anvil, kinds, args.sizes))
    finally:
        anvil.stop()


if __name__ == "__main__":
    main()
