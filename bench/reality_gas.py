"""Gas of answering and claiming on Reality.eth v3 (the real RealityETH_v3_0) on anvil.

Run: .venv/bin/python bench/reality_gas.py

Deploys RealityETH_v3_0 from oracle/chain/artifacts/reality/ on a local anvil and prints,
from the transactions' receipts:

- gas per answer through `RealityAnswerer` (`submitAnswer` with `max_previous` = the bond
  it replies to, sent through the TxManager) against a bare `submitAnswer` (the same call
  with `max_previous` 0, sent as is), for the first answer and for a counter-answer;
  with the wall time per answer of each path (the answerer's reads and pre-send checks
  included);
- gas to claim (`claimWinnings` over the history rebuilt from the logs, then `withdraw`)
  as the history grows: 1, 2, 4 and 8 answers, alternating between two accounts, the
  last one ours;
- gas of a commit-reveal answer (`commit_reveal: true`): `submitAnswerCommitment` then
  `submitAnswerReveal`, for a first answer and for a counter-answer.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from oracle.chain.contracts import encode_call
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.devchain import DEV_KEYS, Anvil, anvil_binary
from oracle.venues.reality.binding import (
    REALITY_ETH,
    RealityAnswerer,
    RealityETH,
    ask_question,
    deploy_reality,
)
from oracle.venues.reality.rules import QuestionKind, encode_question_text

MIN_BOND = 10**16
TIMEOUT = 3600
YES = b"\x00" * 31 + b"\x01"
NO = b"\x00" * 32
HISTORY_LENGTHS = (1, 2, 4, 8)


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
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.02),
    )


class Bench:
    def __init__(
        self,
        asker: TxManager,
        ours: TxManager,
        theirs: TxManager,
        reality: str,
        our_signer: LocalSigner,
    ):
        self.asker = asker
        self.reality = reality
        self.ours = RealityAnswerer(ours, RealityETH(ours.pool, reality), signer=our_signer)
        self.theirs = RealityAnswerer(theirs, RealityETH(theirs.pool, reality))
        self.asked = 0

    async def question(self) -> bytes:
        """A new bool question (min bond `MIN_BOND`, the asker as arbitrator)."""
        self.asked += 1
        return await ask_question(
            self.asker,
            self.reality,
            template_id=0,
            text=encode_question_text(QuestionKind.BOOL, f"Bench question {self.asked}?"),
            arbitrator=self.asker.address,
            timeout=TIMEOUT,
            nonce=self.asked,
            min_bond=MIN_BOND,
        )

    async def bare(self, manager: TxManager, qid: bytes, answer: bytes, bond: int) -> int:
        """`submitAnswer(qid, answer, 0)` sent as is: no reads, no pre-send check."""
        data = encode_call(REALITY_ETH, "submitAnswer", qid, answer, 0)
        intent = await manager.submit(
            TxRequest(key=f"bare:{qid.hex()}:{bond}", to=self.reality, data=data, value=bond)
        )
        return gas(intent)


async def answers(bench: Bench, rounds: int) -> list[str]:
    rows = []
    paths: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for path in ("answerer", "bare"):
            qid = await bench.question()
            for step, (side, answer, bond) in enumerate(
                (("ours", YES, MIN_BOND), ("theirs", NO, 2 * MIN_BOND))
            ):
                started = time.perf_counter()
                if path == "answerer":
                    answerer = bench.ours if side == "ours" else bench.theirs
                    outcome = await answerer.answer(qid, answer)
                    used = gas(outcome.intent)
                else:
                    manager = (bench.ours if side == "ours" else bench.theirs).manager
                    used = await bench.bare(manager, qid, answer, bond)
                wall = time.perf_counter() - started
                name = "first answer" if step == 0 else "counter-answer"
                entry = paths.setdefault(f"{path}:{name}", {"gas": [], "wall": []})
                entry["gas"].append(used)
                entry["wall"].append(wall)
    rows.append(f"  {'answer':<16} {'path':<10} {'gas':>8} {'wall ms':>9}")
    for key, entry in paths.items():
        path, name = key.split(":")
        rows.append(
            f"  {name:<16} {path:<10} {statistics.median(entry['gas']):>8.0f} "
            f"{statistics.median(entry['wall']) * 1e3:>9.1f}"
        )
    return rows


async def commit_reveal(bench: Bench, rounds: int) -> list[str]:
    rows = [f"  {'answer':<16} {'commit':>8} {'reveal':>8} {'total':>8}"]
    found: dict[str, list[tuple[int, int]]] = {"first answer": [], "counter-answer": []}
    for _ in range(rounds):
        for name, pairs in found.items():
            qid = await bench.question()
            if name == "counter-answer":
                gas((await bench.theirs.answer(qid, NO)).intent)
            committed = await bench.ours.commit(qid, YES)
            revealed = await bench.ours.reveal(qid, YES, committed.bond)
            pairs.append((gas(committed.intent), gas(revealed)))
    for name, pairs in found.items():
        commit = statistics.median(c for c, _ in pairs)
        reveal = statistics.median(r for _, r in pairs)
        rows.append(f"  {name:<16} {commit:>8.0f} {reveal:>8.0f} {commit + reveal:>8.0f}")
    return rows


async def claims(bench: Bench, anvil: Anvil) -> list[str]:
    rows = [f"  {'answers':>7} {'claimWinnings':>14} {'withdraw':>9} {'per answer':>11}"]
    for length in HISTORY_LENGTHS:
        qid = await bench.question()
        # Alternate, ours last: ours answers rounds length-1, length-3, ...
        for position in range(length):
            ours = (length - 1 - position) % 2 == 0
            answerer = bench.ours if ours else bench.theirs
            outcome = await answerer.answer(qid, YES if ours else NO)
            gas(outcome.intent)
        anvil.rpc("evm_increaseTime", TIMEOUT + 1)
        anvil.mine()
        claimed = await bench.ours.claim(qid)
        assert claimed is not None
        claim_gas, withdraw_gas = gas(claimed.claim), gas(claimed.withdraw)
        rows.append(f"  {length:>7} {claim_gas:>14} {withdraw_gas:>9} {claim_gas / length:>11.0f}")
    return rows


async def measure(anvil: Anvil, rounds: int) -> None:
    managers = [await make_manager(anvil.url, DEV_KEYS[i]) for i in range(3)]
    try:
        reality = await deploy_reality(managers[0], run="bench")
        bench = Bench(*managers, reality, LocalSigner(DEV_KEYS[1]))
        print(f"RealityETH_v3_0 on anvil; gas from receipts (median of {rounds} runs)")
        for row in await answers(bench, rounds):
            print(row)
        print("commit-reveal (commit_reveal: true): commitment, then its reveal")
        for row in await commit_reveal(bench, rounds):
            print(row)
        print("claim as the history grows (alternating answers, the last ours)")
        for row in await claims(bench, anvil):
            print(row)
    finally:
        for manager in managers:
            await manager.close()
            await manager.pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="questions answered per path")
    args = parser.parse_args()
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    try:
        asyncio.run(measure(anvil, args.rounds))
    finally:
        anvil.stop()


if __name__ == "__main__":
    main()
