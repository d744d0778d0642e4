"""End to end: a question asked on a real anvil is researched by three `llm` agents (two
OpenAI-compatible, one Anthropic, each with its own local model server speaking the real
wire format, a search provider and web pages), decided by the daemon, and proposed
on-chain with the hash of the stored proof."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.core.proof import verify_proof

from ..anvil import DEV_KEYS, Anvil
from .fakes import Internet, answer, cite, serve, text, tools

QUESTION = "Did the candidate win the 2024 election?"
AGENTS = (
    ("gpt-researcher", "openai"),
    ("llama-researcher", "openai"),
    ("claude-researcher", "anthropic"),
)


def oracle_cli(config: Path, *args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "oracle", *args, "--config", str(config)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return run.stdout


def script(internet: Internet) -> None:
    """Search, read the page, stop, answer YES citing what was read."""
    page = internet.page("election")
    steps = [
        tools(("search", {"query": "2024 election result"})),
        tools(("open_page", {"url": page})),
        text("The page reports the result."),
        answer("YES", 0.9, [cite(page, "The candidate won the election")]),
    ]
    internet.openai.script = list(steps)
    internet.anthropic.script = list(steps)


def agent_config(name: str, api: str, internet: Internet) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "llm",
        "api": api,
        "base_url": f"{internet.url}/v1" if api == "openai" else f"{internet.url}/anthropic",
        "model": {"gpt-researcher": "gpt-4.1-mini", "llama-researcher": "llama-3.3-70b"}.get(
            name, "claude-opus-4-6"
        ),
        "api_key_env": "E2E_LLM_KEY",
        "max_retries": 0,
        "request_timeout_seconds": 10,
        "search": [{"kind": "searxng", "base_url": f"{internet.url}/searx"}],
        "pages": {"allowed_networks": ["127.0.0.1/32"], "timeout_seconds": 5},
        "budget": {"wall_seconds": 30, "answer_reserve_seconds": 3},
    }


def test_three_llm_agents_resolve_a_question_on_chain(
    anvil: Anvil, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2E_LLM_KEY", "sk-e2e-test-key")
    internets = [Internet() for _ in AGENTS]

    async def scenario() -> Path:
        async with AsyncExitStack() as stack:
            for internet in internets:
                await stack.enter_async_context(serve(internet))
                script(internet)
            config = write_config(tmp_path, anvil, internets)
            oracle_cli(config, "chain", "deploy", "--min-liveness", "60")
            asked = oracle_cli(
                config, "chain", "ask", "--question", QUESTION,
                "--resolve-after", str(int(time.time()) - 60), "--liveness", "60",
            )  # fmt: skip
            (tmp_path / "question_id").write_text(json.loads(asked)["question_id"])
            assembly = assemble(load_settings(config))
            try:
                await assembly.daemon.run_once()
            finally:
                await assembly.close()
            return config

    config = asyncio.run(scenario())
    question_id = (tmp_path / "question_id").read_text()
    store = open_store(load_settings(config))
    market = store.get_market(f"chain:{question_id}")
    assert market.state == MarketState.SUBMITTED, store.audit(market.id)[-1].reason
    run = store.latest_run(market.id, "done")
    assert run is not None
    assert run.id is not None
    results, failures = store.run_answers(run.id)
    store.engine.dispose()
    assert failures == []
    assert {r.agent_id: (r.outcome, r.model_family) for r in results} == {
        "gpt-researcher": ("YES", "gpt"),
        "llama-researcher": ("YES", "llama"),
        "claude-researcher": ("YES", "claude"),
    }
    on_chain = json.loads(oracle_cli(config, "chain", "status", question_id))
    assert (on_chain["status"], on_chain["outcome_name"]) == ("PROPOSED", "YES")
    assert market.proof_checksum is not None
    assert on_chain["proof_hash"] == "0x" + market.proof_checksum[:40]
    proof_file = tmp_path / "proofs" / f"chain_{question_id}" / f"{market.proof_checksum}.json"
    assert verify_proof(json.loads(proof_file.read_text()))[0]
    # Each agent worked through its own model server: search, page, stop, final answer.
    assert [len(i.openai.requests) + len(i.anthropic.requests) for i in internets] == [4, 4, 4]


def write_config(tmp_path: Path, anvil: Anvil, internets: list[Internet]) -> Path:
    config = {
        "database": {"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        "sources": {"min_total": 1, "min_categories": 1, "min_official": 0, "min_news": 0},
        "daemon": {"proofs_dir": str(tmp_path / "proofs")},
        "metrics": {"enabled": False},
        "agents": [
            agent_config(name, api, internet)
            for (name, api), internet in zip(AGENTS, internets, strict=True)
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
