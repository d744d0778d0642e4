"""One daemon process, two chains: the own contract on one anvil (chain id 31337, signer
one), UMA's Optimistic Oracle V2 and Reality.eth v3 on another (chain id 100, signer
two), configured as two entries of `chains:`. `oracle run --once` answers on all three,
each on its own chain, and the questions the agents disagree on land in ONE review queue
that `oracle review list --chain` and `--venue` filter."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from oracle.config import load_settings
from oracle.core.lifecycle import MarketState
from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import RequestState

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from ..commands import run_oracle
from .chain_world import (
    AGENTS,
    REPORTER_SLOTS,
    World,
    ask_questions,
    build_world,
    question_text,
)
from .test_reality_e2e import INITIAL, RealityWorld
from .test_uma_e2e import AGREED, CONTESTED, OUR_KEY, OURS, UmaWorld

OTHER_CHAIN_ID = 100


def _contested_recording(replays: Path, index: int) -> None:
    """The own contract's question `index` recorded as a disagreement of the agents."""
    document = consensus_document(
        [result_dict(agent, outcome, conf) for agent, outcome, conf in CONTESTED],
        market_id=f"recording-{index}",
        question=question_text(index),
    )
    (replays / f"{index}.json").write_text(json.dumps(document))


@dataclass
class TwoChains:
    """The own contract on `home` (chain id 31337, signer one), UMA's OOv2 and Reality.eth
    v3 on `other` (chain id 100, signer two), nothing asked yet."""

    home: Anvil
    other: Anvil
    own: World
    uma: UmaWorld
    reality: RealityWorld
    tmp_path: Path

    def config(self, database: str, daemon: dict[str, Any] | None = None) -> Path:
        """The daemon's configuration (two entries of `chains:`), with the agents reading
        every venue's recordings made so far from one directory; its path."""
        replays = self.tmp_path / "replays"
        replays.mkdir(exist_ok=True)
        for world in (self.own, self.uma, self.reality):
            for recording in world.replays.glob("*.json"):
                shutil.copy(recording, replays / recording.name)
        fast_tx = {"confirmations": 1, "poll_interval": 0.05}
        config: dict[str, Any] = {
            "database": {"url": database},
            "daemon": {
                "proofs_dir": str(self.tmp_path / "proofs"),
                "retry_backoff": 0,
                **(daemon or {}),
            },
            "consensus": {"agent_timeout": 5},
            "log": {"format": "json"},
            "metrics": {"enabled": False},
            "agents": [{"name": n, "kind": "replay", "directory": str(replays)} for n in AGENTS],
            "chains": [
                {
                    "name": "home",
                    "deployment_file": str(self.own.deployment_file),
                    "rpc": {"urls": [self.home.url]},
                    "signer": {
                        "type": "dev_private_key",
                        "dev_private_key": DEV_KEYS[REPORTER_SLOTS[0]],
                    },
                    "tx": fast_tx,
                    "scanner": {"confirmations": 0},
                    "submitter": {"batch_max_size": 5, "batch_max_wait": 0.5},
                },
                {
                    "name": "gnosis",
                    "chain_id": OTHER_CHAIN_ID,
                    "rpc": {"urls": [self.other.url]},
                    "signer": {"type": "dev_private_key", "dev_private_key": OUR_KEY},
                    "tx": fast_tx,
                    "scanner": {"confirmations": 0},
                },
            ],
            "market_sources": [
                {"kind": "chain", "name": "own", "chain": "home"},
                {
                    "kind": "uma",
                    "name": "uma",
                    "chain": "gnosis",
                    "deployment_file": str(self.uma.deployment_file),
                    "requesters": [self.uma.requester],
                },
                {
                    "kind": "reality",
                    "name": "reality",
                    "chain": "gnosis",
                    "contract_address": self.reality.reality,
                    "arbitrators": [self.reality.arbitrator],
                    "askers": [DEV_ADDRESSES[1]],
                    "bond": {"initial_wei": INITIAL},
                },
            ],
        }
        path = self.tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return path


def two_chains(anvil_factory: AnvilFactory, tmp_path: Path) -> TwoChains:
    home = anvil_factory()
    other = anvil_factory("--chain-id", str(OTHER_CHAIN_ID))
    for where in ("own", "uma", "reality"):
        (tmp_path / where).mkdir()
    return TwoChains(
        home,
        other,
        build_world(home, tmp_path / "own", 0),
        UmaWorld(other, tmp_path / "uma"),
        RealityWorld(other, tmp_path / "reality"),
        tmp_path,
    )


def test_one_daemon_answers_on_two_chains_with_one_review_queue(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    chains = two_chains(anvil_factory, tmp_path)
    home, other, own, uma, reality = (
        chains.home,
        chains.other,
        chains.own,
        chains.uma,
        chains.reality,
    )
    ask_questions(own, 2)  # question 0: the agents agree
    _contested_recording(own.replays, 1)  # question 1: they do not
    uma_agreed = uma.ask("Did the launch happen before the deadline?", AGREED)
    uma_contested = uma.ask("Who won the local chess final?", CONTESTED)
    reality_agreed = reality.ask("Did the bridge open in May?", AGREED)
    database = f"sqlite:///{tmp_path / 'oracle.db'}"
    path = chains.config(database)

    run = run_oracle("run", "--once", "--config", str(path), cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]

    store = Store(open_database(database, create=False))
    try:
        own_agreed, own_contested = (f"own:{qid}" for qid in own.question_ids)
        # The own contract, on chain 31337: proposed there, by signer one.
        assert own.proposals()[own.question_ids[0]] == 1
        assert store.get_market(own_agreed).state == MarketState.SUBMITTED
        # UMA and Reality.eth, on chain 100: proposed and answered there, by signer two.
        view = uma.view(uma_agreed)
        assert (view.state, view.proposer) == (RequestState.PROPOSED, OURS)
        assert store.get_market(uma_agreed).state == MarketState.SUBMITTED
        [(answerer, bond, _)] = reality.history(reality_agreed)
        assert (answerer, bond) == (OURS, INITIAL)
        # Chain 100's signer sent nothing on chain 31337: each chain has its own.
        assert our_receipts(other, OURS)
        assert not our_receipts(home, OURS)
        # Every market names its chain.
        chains = {
            m: store.get_market(m).chain
            for m in (own_agreed, own_contested, uma_agreed, uma_contested, reality_agreed)
        }
        assert chains == {
            own_agreed: "home",
            own_contested: "home",
            uma_agreed: "gnosis",
            uma_contested: "gnosis",
            reality_agreed: "gnosis",
        }
        assert store.get_market(own_contested).state == MarketState.NEEDS_REVIEW
        assert store.get_market(uma_contested).state == MarketState.NEEDS_REVIEW
    finally:
        store.engine.dispose()

    # One review queue for both chains, filtered by chain and by venue.
    def listed(*options: str) -> list[tuple[str, str | None, str]]:
        shown = run_oracle("review", "list", "--json", "--config", str(path), *options)
        assert shown.returncode == 0, shown.stderr
        reviews = json.loads(shown.stdout)["reviews"]
        return sorted((r["market_id"], r["chain"], r["venue"]) for r in reviews)

    everything = listed()
    assert everything == sorted([(own_contested, "home", "own"), (uma_contested, "gnosis", "uma")])
    assert listed("--chain", "home") == [(own_contested, "home", "own")]
    assert listed("--chain", "gnosis") == [(uma_contested, "gnosis", "uma")]
    assert listed("--venue", "uma") == [(uma_contested, "gnosis", "uma")]
    assert listed("--chain", "home", "--venue", "uma") == []
    on = load_settings(path).source_chains()
    assert on == {"own": "home", "uma": "gnosis", "reality": "gnosis"}


def our_receipts(anvil: Anvil, sender: str) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if r["from"].lower() == sender.lower()]
