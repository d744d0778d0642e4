"""A small world for daemon tests on a real anvil: the contracts deployed, questions asked
by a requester (not the daemon's key), replay recordings answering them, and a config
file pointing the daemon at all of it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from oracle.chain.contracts import ORACLE, load_artifact
from oracle.chain.deploy import ask, deploy_contracts
from oracle.chain.events import EventDecoder
from oracle.testing import consensus_document, result_dict

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil
from ..chain.helpers import manager_for

AGENTS = ("alpha", "beta", "gamma")
REQUESTER_KEY = DEV_KEYS[1]
# Each replica signs with its own reporter key: two transaction managers on one key
# would race each other for nonces.
REPORTER_SLOTS = (0, 2, 3)


@dataclass
class World:
    anvil: Anvil
    oracle: str
    deployment_file: Path
    question_ids: list[str]
    replays: Path

    def _proposal_logs(self) -> list[tuple[str, str]]:
        """(question id, transaction hash) of every AnswerProposed event, oldest first."""
        decoder = EventDecoder(load_artifact(ORACLE).abi, "AnswerProposed")
        logs = self.anvil.rpc(
            "eth_getLogs",
            {
                "address": self.oracle,
                "topics": [decoder.topic],
                "fromBlock": "0x0",
                "toBlock": "latest",
            },
        )
        return [
            ("0x" + bytes(decoder.decode(log).args["questionId"]).hex(), log["transactionHash"])
            for log in logs
        ]

    def proposals(self) -> Counter[str]:
        """How many AnswerProposed events each question has on the canonical chain."""
        return Counter(question for question, _ in self._proposal_logs())

    def proposal_transactions(self) -> dict[str, str]:
        """The transaction that carried each question's (last) proposal."""
        return dict(self._proposal_logs())

    def proposal_receipts(self) -> list[dict[str, Any]]:
        """The receipts of the transactions that carried proposals (one per transaction)."""
        hashes = {tx for _, tx in self._proposal_logs()}
        return [self.anvil.rpc("eth_getTransactionReceipt", tx) for tx in sorted(hashes)]

    def reverted(self) -> list[str]:
        return [
            r["transactionHash"]
            for r in self.anvil.receipts_in_chain()
            if int(r["status"], 16) != 1
        ]


def question_text(index: int) -> str:
    return f"Did event number {index} happen as described in its resolution rules?"


def build_world(anvil: Anvil, tmp_path: Path, questions: int, reporters: int = 1) -> World:
    """Deploy (the daemons' keys are the reporters) and ask `questions` binary questions."""

    async def deploy() -> Any:
        async with manager_for(anvil.url, key=DEV_KEYS[REPORTER_SLOTS[0]]) as deployer:
            return await deploy_contracts(
                deployer,
                min_liveness=60,
                reporters=[DEV_ADDRESSES[REPORTER_SLOTS[i]] for i in range(reporters)],
                adapter=False,
            )

    deployment = asyncio.run(deploy())
    deployment_file = tmp_path / "deployment.json"
    deployment.save(deployment_file)
    replays = tmp_path / "replays"
    replays.mkdir()
    world = World(anvil, deployment.address(ORACLE), deployment_file, [], replays)
    ask_questions(world, questions)
    return world


def record_answers(world: World, count: int) -> None:
    """The recordings (two agents say YES, one NO) of the next `count` questions to be
    asked: replay agents read them when they start."""
    first = len(world.question_ids)
    for index in range(first, first + count):
        document = consensus_document(
            [result_dict(agent, "YES" if agent != "gamma" else "NO", 0.8) for agent in AGENTS],
            market_id=f"recording-{index}",
            question=question_text(index),
        )
        (world.replays / f"{index}.json").write_text(json.dumps(document))


def ask_questions(world: World, count: int, earliest_time: int | None = None) -> list[str]:
    """Ask `count` more binary questions (due at `earliest_time`, default a minute ago),
    each with its recordings (`record_answers`); returns their ids, also added to
    `world.question_ids`."""
    first = len(world.question_ids)
    texts = [question_text(i) for i in range(first, first + count)]
    record_answers(world, count)

    async def ask_all() -> list[str]:
        async with manager_for(world.anvil.url, key=REQUESTER_KEY) as requester:
            due = int(time.time()) - 60 if earliest_time is None else earliest_time
            asked = await asyncio.gather(
                *(
                    ask(requester, world.oracle, text=text, earliest_time=due, liveness=60)
                    for text in texts
                )
            )
        return [a.question_id for a in asked]

    ids = asyncio.run(ask_all())
    world.question_ids.extend(ids)
    return ids


def daemon_config(
    world: World,
    tmp_path: Path,
    database_url: str,
    reporter: int = 0,
    *,
    rpc: dict[str, Any] | None = None,
    agent_latency: float = 0.0,
    **daemon: Any,
) -> Path:
    """A config file for one replica; `rpc` overrides `chain.rpc` (the anvil URL, ...);
    each agent takes `agent_latency` seconds to answer."""
    config: dict[str, Any] = {
        "database": {"url": database_url},
        # Short leases, so work a killed process held is resumed within seconds.
        "consensus": {"agent_timeout": 2},
        "daemon": {
            "proofs_dir": str(tmp_path / "proofs"),
            "poll_interval": 0.3,
            "dispatch_interval": 0.2,
            "watch_interval": 1,
            "lease_margin": 1,
            "retry_backoff": 0.5,
            "drain_timeout": 5,
            **daemon,
        },
        "metrics": {"enabled": False},
        "log": {"format": "json"},
        "agents": [
            {
                "name": a,
                "kind": "replay",
                "directory": str(world.replays),
                "latency_seconds": agent_latency,
            }
            for a in AGENTS
        ],
        "market_sources": [{"kind": "chain", "name": "chain"}],
        "chain": {
            "deployment_file": str(world.deployment_file),
            "rpc": {"urls": [world.anvil.url], "retry_backoff": 0.2, **(rpc or {})},
            "signer": {
                "type": "dev_private_key",
                "dev_private_key": DEV_KEYS[REPORTER_SLOTS[reporter]],
            },
            "tx": {"confirmations": 1, "poll_interval": 0.05},
            "scanner": {"confirmations": 0, "poll_interval": 0.3},
            "submitter": {"batch_max_size": 5, "batch_max_wait": 0.5},
        },
    }
    path = tmp_path / f"config-{len(list(tmp_path.glob('config-*.yaml')))}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def wait_for_started(log: Path, count: int, timeout: float = 60) -> None:
    """Until `count` daemons have logged `daemon.started` into `log`."""
    deadline = time.monotonic() + timeout
    while log.read_text().count('"daemon.started"') < count:
        assert time.monotonic() < deadline, "the daemons did not start"
        time.sleep(0.2)


def start_daemon(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "oracle", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )
