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

    def proposals(self) -> Counter[str]:
        """How many AnswerProposed events each question has on the canonical chain."""
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
        return Counter("0x" + bytes(decoder.decode(log).args["questionId"]).hex() for log in logs)

    def reverted(self) -> list[str]:
        return [
            r["transactionHash"]
            for r in self.anvil.receipts_in_chain()
            if int(r["status"], 16) != 1
        ]


def build_world(anvil: Anvil, tmp_path: Path, questions: int, reporters: int = 1) -> World:
    """Deploy (the daemons' keys are the reporters) and ask `questions` binary questions."""
    texts = [
        f"Did event number {i} happen as described in its resolution rules?"
        for i in range(questions)
    ]

    async def setup() -> tuple[str, list[str], Any]:
        async with manager_for(anvil.url, key=DEV_KEYS[REPORTER_SLOTS[0]]) as deployer:
            deployment = await deploy_contracts(
                deployer,
                min_liveness=60,
                reporters=[DEV_ADDRESSES[REPORTER_SLOTS[i]] for i in range(reporters)],
                adapter=False,
            )
        async with manager_for(anvil.url, key=REQUESTER_KEY) as requester:
            past = int(time.time()) - 60
            asked = await asyncio.gather(
                *(
                    ask(
                        requester,
                        deployment.address(ORACLE),
                        text=text,
                        earliest_time=past,
                        liveness=60,
                    )
                    for text in texts
                )
            )
        return deployment.address(ORACLE), [a.question_id for a in asked], deployment

    oracle, ids, deployment = asyncio.run(setup())
    deployment_file = tmp_path / "deployment.json"
    deployment.save(deployment_file)
    replays = tmp_path / "replays"
    replays.mkdir()
    for index, text in enumerate(texts):
        document = consensus_document(
            [result_dict(agent, "YES" if agent != "gamma" else "NO", 0.8) for agent in AGENTS],
            market_id=f"recording-{index}",
            question=text,
        )
        (replays / f"{index}.json").write_text(json.dumps(document))
    return World(anvil, oracle, deployment_file, ids, replays)


def daemon_config(
    world: World, tmp_path: Path, database_url: str, reporter: int = 0, **daemon: Any
) -> Path:
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
        "agents": [{"name": a, "kind": "replay", "directory": str(world.replays)} for a in AGENTS],
        "market_sources": [{"kind": "chain", "name": "chain"}],
        "chain": {
            "deployment_file": str(world.deployment_file),
            "rpc": {"urls": [world.anvil.url], "retry_backoff": 0.2},
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


def start_daemon(config: Path, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "oracle", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
    )
