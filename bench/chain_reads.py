"""CPU the chain layer spends per question read (`AgentOracle.getQuestion`) on anvil.

Run: .venv/bin/python bench/chain_reads.py [--questions 200] [--seconds 2]

Deploys the oracle on a local anvil, asks `--questions` questions, then reads them over and
over and reports this process's CPU time (`time.process_time`, so anvil's own work is not
counted) and wall time per question read:

- `via web3 eth_call`: one `eth_call` per question through web3's middleware and
  formatters, undecoded: how `get_question` read before reads went straight to the
  provider (kept as a fixed reference);
- `get_question`: one read per request, as every single read is made;
- `get_questions xN`: N questions per call (JSON-RPC batches of up to
  `rpc.max_batch_size` = 100 calls, sent concurrently).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from oracle.chain.contracts import ORACLE, AgentOracle, encode_call
from oracle.chain.deploy import ask, deploy_contracts
from oracle.chain.intents import InMemoryIntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.rpc import RpcPool, Web3
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS, Anvil, anvil_binary

Step = Callable[[], Awaitable[object]]
BATCH_SIZES = (5, 20, 100, 200)  # 20: the daemon's default proposal batch


async def ask_questions(manager: TxManager, oracle: str, count: int) -> list[str]:
    """`count` questions, asked 50 at a time (anvil mines each transaction at once)."""
    qids: list[str] = []
    for start in range(0, count, 50):
        asked = await asyncio.gather(
            *(
                ask(manager, oracle, text=f"Bench question {i}?", earliest_time=1, liveness=3600)
                for i in range(start, min(count, start + 50))
            )
        )
        qids += [a.question_id for a in asked]
    return qids


async def per_read(step: Step, reads: int, seconds: float) -> tuple[float, float]:
    """(CPU seconds, wall seconds) per question read, over at least `seconds` of runs."""
    await step()  # warm up: connections, caches
    runs, cpu, wall = 0, 0.0, 0.0
    while wall < seconds or runs < 3:
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        await step()
        cpu += time.process_time() - cpu_start
        wall += time.perf_counter() - wall_start
        runs += 1
    return cpu / (runs * reads), wall / (runs * reads)


def through_web3(pool: RpcPool, oracle: AgentOracle, qids: list[str]) -> Step:
    """Each question read by `w3.eth.call` (middleware, formatters), then decoded."""
    calldata = [encode_call(ORACLE, "getQuestion", bytes.fromhex(q[2:])) for q in qids]

    async def read(data: str) -> Any:
        async def run(w3: Web3) -> Any:
            return await w3.eth.call({"to": oracle.address, "data": data})  # type: ignore[typeddict-item]

        return await pool.call("getQuestion", run)

    async def step() -> None:
        for data in calldata:
            await read(data)

    return step


async def measure(anvil: Anvil, questions: int, seconds: float) -> None:
    pool = RpcPool([anvil.url], RpcSettings())
    await pool.start()
    manager = TxManager(
        pool,
        LocalSigner(DEV_KEYS[0]),
        InMemoryIntentStore(),
        TxSettings(confirmations=1, poll_interval=0.05),
    )
    try:
        deployment = await deploy_contracts(
            manager, min_liveness=3600, reporters=[DEV_ADDRESSES[0]], adapter=False
        )
        oracle = AgentOracle(pool, deployment.address(ORACLE))
        qids = await ask_questions(manager, oracle.address, questions)
        await manager.close()

        async def singles() -> None:
            for qid in qids:
                await oracle.get_question(qid)

        def batches_of(size: int) -> Step:
            async def step() -> None:
                for start in range(0, len(qids), size):
                    await oracle.get_questions(qids[start : start + size])

            return step

        steps: dict[str, tuple[Step, int]] = {
            "via web3 eth_call": (through_web3(pool, oracle, qids), len(qids)),
            "get_question": (singles, len(qids)),
        }
        for size in BATCH_SIZES:
            steps[f"get_questions x{size}"] = (batches_of(size), len(qids))
        print(f"{len(qids)} questions on anvil; CPU and wall time of this process per read")
        print(f"  {'path':<22} {'CPU us/read':>12} {'wall us/read':>13}")
        for name, (step, reads) in steps.items():
            cpu, wall = await per_read(step, reads, seconds)
            print(f"  {name:<22} {cpu * 1e6:>12.1f} {wall * 1e6:>13.1f}")
    finally:
        await manager.close()
        await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200, help="questions asked and read")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = parser.parse_args()
    binary = anvil_binary()
    if binary is None:
        raise SystemExit("anvil not found: run ./scripts/test once (it installs it)")
    anvil = Anvil(binary, [], None)
    anvil.start()
    try:
        asyncio.run(measure(anvil, args.questions, args.seconds))
    finally:
        anvil.stop()


if __name__ == "__main__":
    main()
