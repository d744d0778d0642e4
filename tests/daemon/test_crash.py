"""SIGKILL at random moments, and several replicas at once: every question on-chain is
answered exactly once, and no transaction reverts."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from oracle.app import open_store
from oracle.config import load_settings
from oracle.core.lifecycle import MarketState

from ..anvil import Anvil
from ..conftest import empty_postgres_database
from .chain_world import (
    World,
    ask_questions,
    build_world,
    daemon_config,
    record_answers,
    start_daemon,
    wait_for_started,
)

ANSWERED = {MarketState.SUBMITTED, MarketState.FINAL}


def wait_until_all_answered(world: World, config: Path, timeout: float) -> dict[str, str]:
    store = open_store(load_settings(config))
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    try:
        while time.monotonic() < deadline:
            states = {m.external_id: m.state for m in store.markets()}
            if len(states) == len(world.question_ids) and set(states.values()) <= ANSWERED:
                return states
            time.sleep(0.5)
    finally:
        store.engine.dispose()
    return states


def assert_exactly_once(world: World, config: Path, states: dict[str, str]) -> None:
    assert sorted(states) == sorted(world.question_ids), "every question was discovered"
    assert set(states.values()) <= ANSWERED, states
    proposals = world.proposals()
    assert proposals == dict.fromkeys(world.question_ids, 1), "one proposal per question"
    assert world.reverted() == [], "no transaction reverted"
    store = open_store(load_settings(config))
    try:
        for market in store.markets():
            # The stored proof is the one whose hash is on-chain.
            assert market.proof_checksum is not None
            assert market.submission["question_id"] == market.external_id
    finally:
        store.engine.dispose()


def test_sigkill_at_random_moments_answers_every_question_once(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = build_world(anvil, tmp_path, questions=24)
    config = daemon_config(world, tmp_path, f"sqlite:///{tmp_path / 'oracle.db'}")
    log = tmp_path / "daemon.log"
    moments = random.Random(20261122)
    for _ in range(7):
        process = start_daemon(config, log)
        time.sleep(moments.uniform(0.5, 5.0))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    started_before = log.read_text().count('"daemon.started"')
    survivor = start_daemon(config, log)
    try:
        states = wait_until_all_answered(world, config, timeout=120)
        # Stop it as an operator would: once it runs (it may have had nothing left to do).
        deadline = time.monotonic() + 60
        while log.read_text().count('"daemon.started"') == started_before:
            assert time.monotonic() < deadline, "the survivor never started"
            time.sleep(0.2)
    finally:
        survivor.send_signal(signal.SIGTERM)
        survivor.wait(timeout=30)
    assert survivor.returncode == 0, log.read_text()[-3000:]
    assert_exactly_once(world, config, states)


def test_two_replicas_on_postgresql_answer_every_question_once(
    anvil: Anvil, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    world = build_world(anvil, tmp_path, questions=0, reporters=2)
    database_url = empty_postgres_database(request)
    configs = [
        daemon_config(
            world, tmp_path, database_url, reporter=i, replica_id=f"replica-{i}", agent_latency=1
        )
        for i in range(2)
    ]
    log = tmp_path / "daemons.log"
    log.touch()
    record_answers(world, 24)
    replicas = [start_daemon(config, log) for config in configs]
    try:
        wait_for_started(log, 2)
        ask_questions(world, 24)  # found by whichever replica polls
        states = wait_until_all_answered(world, configs[0], timeout=120)
    finally:
        for process in replicas:
            process.send_signal(signal.SIGTERM)
        for process in replicas:
            process.wait(timeout=30)
    assert [p.returncode for p in replicas] == [0, 0], log.read_text()[-3000:]
    assert_exactly_once(world, configs[0], states)
    # The replicas divided the work, whichever of them polled.
    proposers = Counter(
        receipt["from"].lower()
        for receipt in world.proposal_receipts()
        for _ in range(len(receipt["logs"]))  # one AnswerProposed log per question
    )
    assert len(proposers) == 2, proposers
    assert min(proposers.values()) >= len(world.question_ids) // 4, proposers
