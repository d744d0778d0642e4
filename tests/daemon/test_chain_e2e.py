"""End to end on a real anvil: contracts deployed and questions asked with the CLI, the
daemon (replay agents, SQLite or PostgreSQL) answering on-chain, a contested question
decided by a person with the CLI, and every on-chain proof hash matching a stored proof.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from oracle.app import assemble, open_store
from oracle.config import Settings, load_settings
from oracle.core.lifecycle import MarketState
from oracle.core.proof import verify_proof
from oracle.testing import consensus_document, result_dict

from ..anvil import DEV_KEYS, Anvil

AGREED = "Did the launch happen before the deadline?"
CONTESTED = "Who won the local chess final?"


def oracle_cli(config: Path, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "oracle", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def write_recordings(directory: Path) -> Path:
    directory.mkdir()
    for name, question, votes in (
        ("agreed", AGREED, [("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6)]),
        (
            "contested",
            CONTESTED,
            [("alpha", "YES", 0.7), ("beta", "NO", 0.7), ("gamma", "UNDETERMINED", 0.5)],
        ),
    ):
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
            market_id=name,
            question=question,
        )
        (directory / f"{name}.json").write_text(json.dumps(document))
    return directory


def write_config(tmp_path: Path, anvil: Anvil, database_url: str) -> Path:
    replays = write_recordings(tmp_path / "replays")
    config: dict[str, Any] = {
        "database": {"url": database_url},
        "daemon": {"proofs_dir": str(tmp_path / "proofs"), "retry_backoff": 0},
        "metrics": {"enabled": False},
        "agents": [
            {"name": name, "kind": "replay", "directory": str(replays)}
            for name in ("alpha", "beta", "gamma")
        ],
        "market_sources": [{"kind": "chain", "name": "chain"}],
        "chain": {
            "deployment_file": str(tmp_path / "deployment.json"),
            "rpc": {"urls": [anvil.url]},
            "signer": {"type": "dev_private_key", "dev_private_key": DEV_KEYS[0]},
            "tx": {"confirmations": 1, "poll_interval": 0.05},
            "scanner": {"confirmations": 0},
            "submitter": {"batch_max_wait": 0.3},
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


async def one_pass(settings: Settings) -> None:
    assembly = assemble(settings)
    try:
        await assembly.daemon.run_once()
    finally:
        await assembly.close()


def question_status(config: Path, question_id: str) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(oracle_cli(config, "chain", "status", question_id))
    return status


def test_questions_asked_on_chain_are_answered_with_matching_proofs(
    anvil: Anvil, tmp_path: Path, database_url: str
) -> None:
    config = write_config(tmp_path, anvil, database_url)
    oracle_cli(config, "chain", "deploy", "--min-liveness", "60")
    past = str(int(time.time()) - 60)
    ids = {}
    for text in (AGREED, CONTESTED):
        asked = oracle_cli(
            config, "chain", "ask", "--question", text, "--resolve-after", past, "--liveness", "60"
        )
        ids[text] = json.loads(asked)["question_id"]
    settings = load_settings(config)

    asyncio.run(one_pass(settings))

    store = open_store(settings)
    agreed = store.get_market(f"chain:{ids[AGREED]}")
    assert agreed.state == MarketState.SUBMITTED
    on_chain = question_status(config, ids[AGREED])
    assert on_chain["status"] == "PROPOSED"
    assert on_chain["outcome_name"] == "YES"
    assert agreed.proof_checksum is not None
    assert on_chain["proof_hash"] == "0x" + agreed.proof_checksum[:40]
    proof = json.loads(
        (tmp_path / "proofs" / f"chain_{ids[AGREED]}" / f"{agreed.proof_checksum}.json").read_text()
    )
    assert verify_proof(proof)[0]

    # The contested question waits for a person, who decides with the CLI.
    contested_id = f"chain:{ids[CONTESTED]}"
    assert store.get_market(contested_id).state == MarketState.NEEDS_REVIEW
    assert question_status(config, ids[CONTESTED])["status"] == "REQUESTED"
    [item] = store.reviews()
    # A decision carries a real identity: a console account's API token.
    (tmp_path / "password").write_text("a long enough password\n")
    oracle_cli(
        config, "console", "user", "add", "alice", "--role", "reviewer",
        "--password-file", str(tmp_path / "password"),
    )  # fmt: skip
    (tmp_path / "token").write_text(oracle_cli(config, "console", "token", "create", "alice"))
    oracle_cli(
        config,
        "review",
        "decide",
        str(item.id),
        "--outcome",
        "NO",
        "--reason",
        "the federation's result page",
        "--token-file",
        str(tmp_path / "token"),
    )

    # The chain's time passes beyond the challenge window (the daemon judges the window by
    # the chain's clock); the next pass delivers the decision and sees the first answer
    # become final.
    anvil.rpc("evm_increaseTime", 120)
    anvil.mine()
    asyncio.run(one_pass(settings))
    decided = store.get_market(contested_id)
    assert decided.state == MarketState.SUBMITTED
    contested_on_chain = question_status(config, ids[CONTESTED])
    assert contested_on_chain["outcome_name"] == "NO"
    assert contested_on_chain["proof_hash"] == "0x" + (decided.proof_checksum or "")[:40]
    assert store.get_market(f"chain:{ids[AGREED]}").state == MarketState.FINAL
    assert question_status(config, ids[AGREED])["status"] == "FINAL"

    # Nothing was proposed twice and nothing reverted.
    receipts = anvil.receipts_in_chain()
    assert all(int(r["status"], 16) == 1 for r in receipts)
    store.engine.dispose()
