"""The demo of the daemon on Reality.eth v3: a yes/no question asked with a bounty,
researched by `replay` agents and answered with a bond; another account answers otherwise
at double the bond and the daemon defends at double again; once the timeout passes it
claims the bounty and the bonds and withdraws them.

Reality.eth's own contract (RealityETH_v3_0, from `@reality.eth/contracts`) and the tests'
small arbitrator are deployed on a local anvil; everything lives under data/demo-reality/.
Run it after setup (`./scripts/demo` or `./scripts/test` install what it needs):

    .venv/bin/python scripts/demo_reality.py
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

from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings
from oracle.devchain import DEV_ADDRESSES, DEV_KEYS
from oracle.testing import consensus_document, result_dict
from oracle.venues.reality.binding import (
    AnswerLog,
    QuestionView,
    RealityAnswerer,
    RealityETH,
    ask_question,
    deploy_arbitrator,
    deploy_reality,
)
from oracle.venues.reality.rules import QuestionKind, encode_question_text, parse_question
from oracle.venues.reality.venue import outcome_of_answer

ROOT = Path(__file__).resolve().parent.parent
ETHER = 10**18
TIMEOUT = 3600  # seconds without a new answer before the last one stands (chain's clock)
MIN_BOND, INITIAL, BOUNTY, FEE = ETHER // 10, ETHER // 5, ETHER // 4, ETHER // 100
TITLE = "Did the demo bridge open before the deadline?"
TEXT = encode_question_text(QuestionKind.BOOL, TITLE, category="demo")
AGENTS = (("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6))
ASKER, ANSWERER, OTHER = 1, 2, 3
NO = bytes(32)


async def deploy_and_ask(url: str) -> tuple[str, str, str]:
    """The contract and an arbitrator; one bool question asked with a bounty. Returns the
    contract, the arbitrator and the question id."""
    deployer = await dev_manager(url, 0)
    try:
        reality = await deploy_reality(deployer, run="demo")
        arbitrator = await deploy_arbitrator(deployer, reality, FEE, run="demo")
    finally:
        await close_manager(deployer)
    asker = await dev_manager(url, ASKER)
    try:
        # Opening when asked, as Omen and Seer ask: the question names when it can be answered.
        latest = await asker.pool.call(
            "eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest")
        )
        qid = await ask_question(
            asker,
            reality,
            template_id=0,
            text=TEXT,
            arbitrator=arbitrator,
            timeout=TIMEOUT,
            opening_ts=int(latest["timestamp"]),
            min_bond=MIN_BOND,
            bounty=BOUNTY,
        )
    finally:
        await close_manager(asker)
    return reality, arbitrator, "0x" + qid.hex()


def write_config(home: Path, url: str, reality: str, arbitrator: str, qid: str) -> Path:
    replays = home / "replays"
    replays.mkdir()
    document = consensus_document(
        [result_dict(agent, outcome, conf) for agent, outcome, conf in AGENTS],
        market_id=f"reality:{qid}",
        question=TITLE,
        outcomes=["YES", "NO"],
    )
    (replays / "demo-reality.json").write_text(json.dumps(document))
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
                "kind": "reality",
                "name": "reality",
                "contract_address": reality,
                "arbitrators": [arbitrator],
                "askers": [DEV_ADDRESSES[ASKER]],
                "bond": {
                    "initial_wei": INITIAL,
                    "defend": True,
                    "max_per_question_wei": 10 * INITIAL,
                    "max_total_wei": 20 * INITIAL,
                },
            }
        ],
        "chains": [
            {
                "name": "default",
                "rpc": {"urls": [url]},
                "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[ANSWERER]},
                "tx": {"confirmations": 1},
                "scanner": {"confirmations": 0, "poll_interval": 1},
            }
        ],
    }
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def read(url: str, reality: str, qid: str) -> tuple[QuestionView, list[AnswerLog], int]:
    """The question, its answers and what the contract holds for the daemon's account."""

    async def run() -> tuple[QuestionView, list[AnswerLog], int]:
        pool = RpcPool([url], RpcSettings())
        await pool.start()
        try:
            contract = RealityETH(pool, reality)
            return (
                await contract.get_question(qid),
                await contract.history(qid),
                await contract.balance_of(DEV_ADDRESSES[ANSWERER]),
            )
        finally:
            await pool.close()

    return asyncio.run(run())


def counter_answer(url: str, reality: str, qid: str) -> int:
    """Another account answers No at the smallest bond the contract takes (double)."""

    async def run() -> int:
        other = await dev_manager(url, OTHER)
        try:
            outcome = await RealityAnswerer(other, RealityETH(other.pool, reality)).answer(qid, NO)
        finally:
            await close_manager(other)
        if not outcome.answered:
            sys.exit(f"demo: the counter-answer failed: {outcome.intent.error}")
        return outcome.bond

    return asyncio.run(run())


def _answers(history: list[AnswerLog]) -> str:
    question = parse_question(0, TEXT)
    return ", ".join(
        f"{outcome_of_answer(question, h.entry.answer)} by "
        f"{'the daemon' if h.entry.answerer == DEV_ADDRESSES[ANSWERER] else h.entry.answerer}"
        f" ({h.entry.bond / ETHER:g} ETH)"
        for h in history
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=ROOT / "data" / "demo-reality")
    args = parser.parse_args()
    home: Path = args.home
    with demo_run(home) as run:
        chain = run.chain
        reality, arbitrator, qid = asyncio.run(deploy_and_ask(chain.url))
        print(f"1. RealityETH_v3_0 at {reality} on anvil ({chain.url})")
        print(f"2. asked, with a bounty of {BOUNTY / ETHER:g} ETH: question {qid}")
        config = write_config(home, chain.url, reality, arbitrator, qid)
        run.start_daemon(config)
        log = run.log
        market_id = f"reality:{qid}"
        before = chain.balance(DEV_ADDRESSES[ANSWERER])
        run.wait_for("the answer", lambda: stored_market(home, market_id)[0] == "submitted")
        print(f"3. the daemon answered: {_answers(read(chain.url, reality, qid)[1])}")
        counter_answer(chain.url, reality, qid)
        run.wait_for("the defence", lambda: len(read(chain.url, reality, qid)[1]) == 3)
        print(f"4. countered, then defended: {_answers(read(chain.url, reality, qid)[1])}")
        run.wait_for("the market", lambda: stored_market(home, market_id)[0] == "submitted")
        chain.rpc("evm_increaseTime", TIMEOUT + 1)
        chain.mine()
        run.wait_for("the claim", lambda: "settled" in stored_market(home, market_id)[1])
        view, _, held = read(chain.url, reality, qid)
        state, submission = stored_market(home, market_id)
        gained = chain.balance(DEV_ADDRESSES[ANSWERER]) - before
        print(
            f"5. after the timeout: market {state}, final answer "
            f"{submission.get('final_outcome')}; claimed and withdrawn (history hash "
            f"{'cleared' if view.history_hash == bytes(32) else 'kept'}, {held} wei left "
            f"in the contract): the daemon's account gained {gained / ETHER:.6f} ETH "
            "after its bonds and gas"
        )
        print(f"   proofs: {home / 'proofs'}   config: {config}   log: {log}")


if __name__ == "__main__":
    main()
