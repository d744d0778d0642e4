"""End to end on a real anvil: a question asked on the daemon's own oracle contract is
contested by the agents' independent answers (replay agents, two against two), settled by
a debate round in which one agent brings new evidence (a recorded round,
`<replays>/debate/round-1/`), and proposed on-chain with a proof that verifies, whose hash
is the one on-chain, and that records the rounds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml

from oracle.app import assemble, open_store
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.testing import consensus_document, result_dict, source_dicts
from tests.commands import run_oracle

from ..anvil import Anvil
from .chain_world import build_world, daemon_config, question_text

AGENTS = ("alpha", "beta", "gamma", "delta")


def record_debate(replays: Path, question: str) -> None:
    """Two against two in the independent research; in round 1 gamma comes back with
    sources nobody had shown it and says YES, delta keeps NO."""

    def write(directory: Path, results: list[dict[str, Any]]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        document = consensus_document(results, market_id="contested", question=question)
        (directory / "0.json").write_text(json.dumps(document))

    write(
        replays,
        [
            result_dict("alpha", "YES", 0.8, 60),
            result_dict("beta", "YES", 0.8, 55),
            result_dict("gamma", "NO", 0.7, 55),
            result_dict("delta", "NO", 0.7, 50),
        ],
    )
    informed = result_dict("gamma", "YES", 0.85, 55)
    informed["sources"] = source_dicts(
        "gamma-second-look", 55, quote="The event happened as described, organisers confirmed"
    )
    write(replays / "debate" / "round-1", [informed, result_dict("delta", "NO", 0.7, 50)])


def test_a_contested_question_is_settled_by_debate_and_proposed_with_its_proof(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, questions=1)
    (question_id,) = world.question_ids
    record_debate(world.replays, question_text(0))  # in place of the world's 2-1 recording
    path = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    config = yaml.safe_load(path.read_text())
    config["consensus"]["conflict_resolution"] = "debate"
    config["agents"] = [
        {"name": name, "kind": "replay", "directory": str(world.replays)} for name in AGENTS
    ]
    path.write_text(yaml.safe_dump(config))
    settings = load_settings(path)

    async def one_pass() -> None:
        assembly = assemble(settings)
        try:
            await assembly.daemon.run_once()
        finally:
            await assembly.close()

    asyncio.run(one_pass())

    store = open_store(settings)
    try:
        row = store.get_market(f"chain:{question_id}")
    finally:
        store.engine.dispose()
    assert row.state == MarketState.SUBMITTED
    assert row.proof_checksum is not None
    status = run_oracle("chain", "status", question_id, "--config", str(path))
    assert status.returncode == 0, status.stderr
    on_chain = json.loads(status.stdout)
    assert (on_chain["status"], on_chain["outcome_name"]) == ("PROPOSED", "YES")
    assert on_chain["proof_hash"] == "0x" + row.proof_checksum[:40]
    assert world.proposals() == {question_id: 1}
    assert world.reverted() == []

    proof_file = tmp_path / "proofs" / f"chain_{question_id}" / f"{row.proof_checksum}.json"
    verified = run_oracle("proof", "verify", str(proof_file))
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.strip() == f"ok: checksum {row.proof_checksum} matches"
    proof = json.loads(proof_file.read_text())
    assert (proof["verdict"]["action"], proof["verdict"]["outcome"]) == ("submit", "YES")
    debate = proof["debate"]
    assert debate["initial"] == {"alpha": "YES", "beta": "YES", "delta": "NO", "gamma": "NO"}
    assert debate["stop"] == "converged"
    (first,) = debate["rounds"]
    assert [(f["agent"], f["from"], f["to"], f["counted"]) for f in first["flips"]] == [
        ("gamma", "NO", "YES", True)
    ]
    assert len(first["flips"][0]["new_sources"]) == 55
    assert first["standing"] == {"alpha": "YES", "beta": "YES", "delta": "NO", "gamma": "YES"}
    assert first["posterior"]["YES"] >= 0.8
    # The verdict was judged on the standing answers after the debate: gamma's second look.
    votes = {v["agent_id"]: (v["outcome"], v["counted"]) for v in proof["votes"]}
    assert votes == {
        "alpha": ("YES", True),
        "beta": ("YES", True),
        "gamma": ("YES", True),
        "delta": ("NO", True),
    }
