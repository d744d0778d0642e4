"""End to end on Reality.eth's real contract (RealityETH_v3_0, compiled from
@reality.eth/contracts) on anvil, with the tests' small arbitrator: the daemon (replay
agents) discovering a question, researching, answering with a bond; another account
countering at double the bond and the daemon defending, or sending the market to a person
when a defence is past a cap; arbitration requested and ruled; finalization by timeout,
then claim and withdraw to the wei; a review verdict that posts no bond; another
answerer's first answer recorded with a review item when it contradicts ours; a daemon
SIGKILLed between broadcasting an answer and its confirmation answering once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.chain.checkpoint import InMemoryCheckpointStore
from oracle.chain.contracts import encode_call
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxRequest
from oracle.config import Settings, load_settings
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketRef
from oracle.errors import SetupError
from oracle.store.repository import Store
from oracle.testing import consensus_document, result_dict
from oracle.venues.reality.binding import (
    ANSWER_PREFIX,
    REALITY_ARBITRATOR,
    AnswerLog,
    QuestionSource,
    QuestionView,
    RealityAnswerer,
    RealityETH,
    ask_question,
    deploy_arbitrator,
    deploy_reality,
)
from oracle.venues.reality.rules import NULL_HASH, QuestionKind, encode_question_text
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.reality.venue import RealityParts, RealityVenue

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from .venue_world import (
    CRASH_DAEMON,
    gauge,
    intent_keys,
    kill_once_broadcast,
    one_pass,
    restart_until,
    start_once,
)

ETHER = 10**18
MIN_BOND = ETHER // 10
INITIAL = ETHER // 5  # the policy's first bond: above the question's min_bond
BOUNTY = ETHER // 4
TIMEOUT = 3600
FEE = ETHER // 100  # the arbitrator's
ASKER_KEY, OUR_KEY, OTHER_KEY = DEV_KEYS[1], DEV_KEYS[2], DEV_KEYS[3]
OURS, OTHER = DEV_ADDRESSES[2], DEV_ADDRESSES[3]
THIRD_KEY, THIRD = DEV_KEYS[0], DEV_ADDRESSES[0]  # the deployer, answering too
YES_WORD, NO_WORD = (1).to_bytes(32, "big"), bytes(32)
AGENTS = ("alpha", "beta", "gamma")
AGREED = [("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6)]
CONTESTED = [("alpha", "YES", 0.7), ("beta", "NO", 0.7), ("gamma", "UNDETERMINED", 0.5)]
# What claiming pays us after we answered INITIAL, they 2x, we 4x, and ours stood: the
# bounty and every bond, less the 1/40 withheld from each but the last.
WON_AFTER_DEFENCE = (
    BOUNTY + 4 * INITIAL + (2 * INITIAL - 2 * INITIAL // 40) + INITIAL - INITIAL // 40
)


class RealityWorld:
    def __init__(self, anvil: Anvil, tmp_path: Path) -> None:
        self.anvil = anvil
        self.tmp_path = tmp_path
        self.replays = tmp_path / "replays"
        self.replays.mkdir()
        self.nonce = 0
        self.texts: dict[str, str] = {}
        self.reality, self.arbitrator = asyncio.run(self._deploy())

    async def _deploy(self) -> tuple[str, str]:
        async with manager_for(self.anvil.url) as deployer:
            reality = await deploy_reality(deployer, run="e2e")
            arbitrator = await deploy_arbitrator(deployer, reality, FEE, run="e2e")
        return reality, arbitrator

    def ask(
        self, title: str, votes: list[tuple[str, str, float]], opening_ts: int | None = None
    ) -> str:
        """A bool question asked by the asker with a bounty, and the agents' recorded
        answers to it; the market id. It opens at `opening_ts`, by default when asked (the
        latest block's time), as Omen and Seer ask: their questions name the time."""
        if opening_ts is None:
            latest = self.anvil.rpc("eth_getBlockByNumber", "latest", False)
            opening_ts = int(latest["timestamp"], 16)
        text = encode_question_text(QuestionKind.BOOL, title, category="news")
        self.nonce += 1
        self.texts[title] = text

        async def run() -> bytes:
            async with manager_for(self.anvil.url, key=ASKER_KEY) as asker:
                return await ask_question(
                    asker,
                    self.reality,
                    template_id=0,
                    text=text,
                    arbitrator=self.arbitrator,
                    timeout=TIMEOUT,
                    nonce=self.nonce,
                    opening_ts=opening_ts,
                    min_bond=MIN_BOND,
                    bounty=BOUNTY,
                )

        market_id = "reality:0x" + asyncio.run(run()).hex()
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
            market_id=market_id,
            question=title,
            outcomes=["YES", "NO"],
        )
        (self.replays / f"{market_id.split(':')[1]}.json").write_text(json.dumps(document))
        return market_id

    def config(
        self,
        database_url: str,
        daemon: dict[str, Any] | None = None,
        source: dict[str, Any] | None = None,
        chain: dict[str, Any] | None = None,
        **bond: Any,
    ) -> Settings:
        """The daemon's settings (also written to `config.yaml` in the test's directory);
        `chain`: more keys of the chain's section."""
        config: dict[str, Any] = {
            "database": {"url": database_url},
            "daemon": {
                "proofs_dir": str(self.tmp_path / "proofs"),
                "retry_backoff": 0,
                **(daemon or {}),
            },
            "consensus": {"agent_timeout": 5},
            "log": {"format": "json"},
            "metrics": {"enabled": False},
            "agents": [
                {"name": name, "kind": "replay", "directory": str(self.replays)} for name in AGENTS
            ],
            "market_sources": [
                {
                    "kind": "reality",
                    "name": "reality",
                    "contract_address": self.reality,
                    "arbitrators": [self.arbitrator],
                    "askers": [DEV_ADDRESSES[1]],
                    "bond": {"initial_wei": INITIAL, **bond},
                    **(source or {}),
                }
            ],
            "chain": {
                "rpc": {"urls": [self.anvil.url]},
                "signer": {"type": "dev_private_key", "dev_private_key": OUR_KEY},
                "tx": {"confirmations": 1, "poll_interval": 0.05},
                "scanner": {"confirmations": 0},
                **(chain or {}),
            },
        }
        path = self.tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return load_settings(path)

    def _read(self, function: str, market_id: str) -> Any:
        qid = market_id.split(":")[1]

        async def run() -> Any:
            async with manager_for(self.anvil.url) as reader:
                return await getattr(RealityETH(reader.pool, self.reality), function)(qid)

        return asyncio.run(run())

    def history(self, market_id: str) -> list[tuple[str, int, bytes]]:
        """(answerer, bond, answer) of each answer, oldest first, from the logs."""
        logs: list[AnswerLog] = self._read("history", market_id)
        return [(h.entry.answerer, h.entry.bond, h.entry.answer) for h in logs]

    def view(self, market_id: str) -> QuestionView:
        view: QuestionView = self._read("get_question", market_id)
        return view

    def held_for_us(self) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                return await RealityETH(reader.pool, self.reality).balance_of(OURS)

        return asyncio.run(run())

    def counter(self, market_id: str, answer: bytes, key: str = OTHER_KEY) -> int:
        """Another account answers at the smallest bond the contract takes (double)."""

        async def run() -> int:
            async with manager_for(self.anvil.url, key=key) as other:
                answerer = RealityAnswerer(other, RealityETH(other.pool, self.reality))
                outcome = await answerer.answer(market_id.split(":")[1], answer)
                assert outcome.answered, outcome.intent.error
                return outcome.bond

        return asyncio.run(run())

    def request_arbitration(self, market_id: str, max_previous: int) -> None:
        async def run() -> None:
            async with manager_for(self.anvil.url, key=OTHER_KEY) as other:
                await self._call(other, "requestArbitration", market_id, max_previous, value=FEE)

        asyncio.run(run())

    def rule(self, market_id: str, answer: bytes) -> None:
        """The arbitrator's owner rules `answer`, naming the last answer as Reality.eth
        checks it against the history hash."""
        logs: list[AnswerLog] = self._read("history", market_id)
        before = logs[-2].history_hash if len(logs) > 1 else NULL_HASH

        async def run() -> None:
            async with manager_for(self.anvil.url) as owner:
                await self._call(
                    owner,
                    "rule",
                    market_id,
                    answer,
                    before,
                    logs[-1].entry.answer,
                    logs[-1].entry.answerer,
                )

        asyncio.run(run())

    async def _call(
        self, manager: Any, function: str, market_id: str, *args: Any, value: int = 0
    ) -> None:
        qid = bytes.fromhex(market_id.split(":")[1][2:])
        intent = await manager.submit(
            TxRequest(
                key=f"{function}:{market_id}",
                to=self.arbitrator,
                data=encode_call(REALITY_ARBITRATOR, function, qid, *args),
                value=value,
            )
        )
        assert intent.state == IntentState.CONFIRMED, intent.error

    def elapse(self, seconds: int) -> None:
        self.anvil.rpc("evm_increaseTime", seconds)
        self.anvil.mine()

    def our_transactions(self) -> list[dict[str, Any]]:
        return [r for r in self.anvil.receipts_in_chain() if r["from"].lower() == OURS.lower()]

    def our_gas(self) -> int:
        return sum(
            int(r["gasUsed"], 16) * int(r["effectiveGasPrice"], 16) for r in self.our_transactions()
        )

    def reverted(self) -> list[str]:
        return [
            r["transactionHash"]
            for r in self.anvil.receipts_in_chain()
            if int(r["status"], 16) != 1
        ]


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> RealityWorld:
    return RealityWorld(anvil, tmp_path)


def assert_settled_as(store: Store, market_id: str, outcome: str) -> None:
    """The accuracy ledger holds the finalized answer, and how it became final."""
    ledger = store.final_outcome(market_id)
    assert ledger is not None
    assert (ledger.outcome, ledger.finality) == (outcome, "reality-finalization")


def test_answered_countered_defended_final_then_claimed_and_a_review_posts_no_bond(
    world: RealityWorld, database_url: str
) -> None:
    agreed = world.ask("Did the bridge open before June?", AGREED)
    contested = world.ask("Who won the local chess final?", CONTESTED)
    settings = world.config(database_url, defend=True, max_per_question_wei=10 * INITIAL)
    before = world.anvil.balance(OURS)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    market = store.get_market(agreed)
    assert market.state == MarketState.SUBMITTED
    assert market.outcomes == ["YES", "NO"]
    assert market.details["arbitrator"] == world.arbitrator
    assert world.history(agreed) == [(OURS, INITIAL, YES_WORD)]
    assert market.submission["reference"] == world.our_transactions()[0]["transactionHash"]
    assert market.submission["bond"] == INITIAL
    # The contested question went to a person: nothing posted on it.
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.history(contested) == []
    assert [k for k in intent_keys(store) if k.startswith(ANSWER_PREFIX)] == [
        f"{ANSWER_PREFIX}31337:{world.reality.lower()}:{agreed.split(':')[1]}:0"
    ]
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == INITIAL

    # Another account answers No at double the bond: the policy defends. The answer back
    # is seen from the contract's events in the pass's poll, so the same pass researches
    # again and answers at double the bond.
    assert world.counter(agreed, NO_WORD) == 2 * INITIAL
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    [reset] = [a for a in store.audit(agreed) if a.event == "proposal_reset"]
    assert "our YES was superseded by NO" in reset.reason
    assert "defending at" in reset.reason
    assert gauge(metrics, "oracle_answers_superseded_total", venue="reality", decision="defend")
    defended = store.get_market(agreed)
    assert defended.state == MarketState.SUBMITTED
    assert world.history(agreed) == [
        (OURS, INITIAL, YES_WORD),
        (OTHER, 2 * INITIAL, NO_WORD),
        (OURS, 4 * INITIAL, YES_WORD),
    ]
    assert defended.submission["ours_on_question"] == 5 * INITIAL

    world.elapse(TIMEOUT + 1)
    _final_then_claimed_once(world, settings, store, agreed, before)
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.reverted() == []
    store.engine.dispose()


def _final_then_claimed_once(
    world: RealityWorld, settings: Settings, store: Store, market_id: str, before: int
) -> None:
    """The timeout passed on our defence: final with our YES, claimed and withdrawn once,
    every wei accounted for."""
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, final.id, "YES")
    assert final.submission["settled"] == world.our_transactions()[-1]["transactionHash"]
    assert world.view(market_id).history_hash == NULL_HASH  # claimed
    assert world.held_for_us() == 0  # withdrawn
    # Two answers, the claim and the withdrawal.
    assert len(world.our_transactions()) == 4
    assert world.anvil.balance(OURS) == (
        before - INITIAL - 4 * INITIAL + WON_AFTER_DEFENCE - world.our_gas()
    )
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == WON_AFTER_DEFENCE
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == 0
    assert gauge(metrics, "oracle_bonds_claimable", **labels) == 0
    one_pass(settings)  # settled once: nothing more is sent
    assert len(world.our_transactions()) == 4


def test_arbitration_requested_moves_the_market_to_disputed_and_the_ruling_is_claimed(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Was the treaty signed?", AGREED)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", defend=True, max_per_question_wei=10 * INITIAL
    )
    before = world.anvil.balance(OURS)
    one_pass(settings)
    world.counter(market_id, NO_WORD)
    one_pass(settings)  # superseded: reset
    one_pass(settings)  # defended at 4x
    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.SUBMITTED

    world.request_arbitration(market_id, 4 * INITIAL)
    one_pass(settings)
    disputed = store.get_market(market_id)
    assert disputed.state == MarketState.DISPUTED
    assert "arbitration was requested" in store.audit(market_id)[-1].reason

    world.rule(market_id, YES_WORD)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, final.id, "YES")
    assert store.audit(market_id)[-1].event == "dispute_rejected"
    assert world.held_for_us() == 0
    # The ruling is an entry with bond 0 after ours: the claim pays as if ours stood.
    assert world.anvil.balance(OURS) == (
        before - INITIAL - 4 * INITIAL + WON_AFTER_DEFENCE - world.our_gas()
    )
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == WON_AFTER_DEFENCE
    assert world.reverted() == []
    store.engine.dispose()


def test_a_defence_past_the_cap_goes_to_a_person_and_a_lost_question_is_not_claimed(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the comet pass within a lunar distance?", AGREED)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", defend=True, max_per_question_wei=3 * INITIAL
    )
    before = world.anvil.balance(OURS)
    one_pass(settings)
    world.counter(market_id, NO_WORD)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.DISPUTED  # waits for a person, not researched again
    reason = store.audit(market_id)[-1].reason
    assert "a defence at 800000000000000000 wei is past a cap" in reason
    assert "per-question cap 600000000000000000" in reason
    assert gauge(metrics, "oracle_answers_superseded_total", venue="reality", decision="review")
    assert _attention_labels(metrics, market_id)["reason"] == "disputed"  # shown to people
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert len(world.history(market_id)) == 2  # no defence was sent

    # Their No stands: final with their outcome; nothing of ours won, so nothing is claimed.
    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, final.id, "NO")
    assert store.audit(market_id)[-1].event == "dispute_upheld"
    assert len(world.our_transactions()) == 1  # the one answer
    assert world.anvil.balance(OURS) == before - INITIAL - world.our_gas()
    assert world.reverted() == []
    store.engine.dispose()


def _attention_labels(metrics: DaemonMetrics, market_id: str) -> dict[str, str]:
    for metric in metrics.registry.collect():
        for sample in metric.samples:
            if sample.name == "oracle_market_attention_timestamp_seconds" and (
                sample.labels.get("market") == market_id
            ):
                return dict(sample.labels)
    return {}


def test_another_answerers_first_answer_is_recorded_and_a_cap_refuses_a_bond(
    world: RealityWorld, tmp_path: Path
) -> None:
    theirs = world.ask("Did the other answerer get it right?", AGREED)
    same = world.ask("Did the other answerer agree with us?", AGREED)
    first = world.ask("Was the first of two questions answered?", AGREED)
    second = world.ask("Was the second of two questions answered?", AGREED)
    world.counter(theirs, NO_WORD)
    world.counter(same, YES_WORD)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", source={"claim": False}, max_total_wei=INITIAL
    )
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    recorded = store.get_market(theirs)
    assert recorded.state == MarketState.SUBMITTED
    submission = recorded.submission
    assert submission["answered_by_other"] is True
    assert (submission["their_outcome"], submission["our_outcome"]) == ("NO", "YES")
    assert submission["agrees"] is False
    assert submission["answerer"] == OTHER
    [item] = store.reviews()
    assert item.market_id == theirs
    assert "answered NO (bond 100000000000000000 wei)" in item.reasons[0]
    assert "our verdict is YES" in item.reasons[0]
    assert gauge(metrics, "oracle_venue_disagreements_total", venue="reality") == 1
    agreeing = store.get_market(same).submission
    assert (agreeing["answered_by_other"], agreeing["agrees"]) == (True, True)
    # One of the two open questions got our bond; the other would break the total cap.
    answered = [m for m in (first, second) if world.history(m)]
    assert len(answered) == 1
    [refused] = [m for m in (first, second) if m not in answered]
    assert store.get_market(refused).state == MarketState.FAILED_RETRY
    assert "bond refused (total_cap)" in store.audit(refused)[-1].reason
    assert gauge(metrics, "oracle_bond_refusals_total", venue="reality", reason="total_cap") == 1
    assert len(world.our_transactions()) == 1

    world.elapse(TIMEOUT + 1)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    # claim: false: what our answer won waits in the contract, shown as claimable.
    assert store.get_market(answered[0]).state == MarketState.FINAL
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimable", **labels) == BOUNTY + INITIAL
    # The finalized answer left the total cap: the refused question, never answered (so
    # still open), got its bond at the retry.
    assert world.history(refused) == [(OURS, INITIAL, YES_WORD)]
    assert store.get_market(refused).state == MarketState.SUBMITTED
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == INITIAL
    assert len(world.our_transactions()) == 2  # two answers, no claim
    final = store.get_market(theirs)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, final.id, "NO")
    assert store.reviews() == []
    [closed] = store.reviews("closed")
    assert (closed.id, closed.decided_reason) == (item.id, "the venue settled on NO")
    assert world.reverted() == []
    store.engine.dispose()


def test_a_person_confirming_a_counter_answer_answers_over_them_at_double_the_bond_once(
    world: RealityWorld, database_url: str
) -> None:
    countered = world.ask("Should we answer over the other answerer?", AGREED)
    capped = world.ask("Would a second counter-answer break the cap?", AGREED)
    for market_id in (countered, capped):
        world.counter(market_id, NO_WORD)  # at the question's min_bond; we say YES
    settings = world.config(
        database_url, source={"counter_answer": "after_review"}, max_total_wei=INITIAL
    )
    one_pass(settings)

    store = open_store(settings)
    items = {item.market_id: item for item in store.reviews()}
    assert set(items) == {countered, capped}
    assert "answered NO (bond 100000000000000000 wei)" in items[countered].reasons[0]
    assert "confirms a counter-answer" in items[countered].reasons[1]
    assert store.get_market(countered).submission["challenge"] == "counter_answer"
    assert world.our_transactions() == []  # nothing before a person confirms

    assert store.decide_review(items[countered].id, "YES", "it happened", "alice").state == (
        MarketState.CHALLENGING
    )
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    one_pass(settings)  # again: the counter-answer is not sent twice

    # Our answer over theirs at double their bond, once; the market follows it as ours.
    assert world.history(countered) == [(OTHER, MIN_BOND, NO_WORD), (OURS, 2 * MIN_BOND, YES_WORD)]
    market = store.get_market(countered)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["answerer"] == OURS
    assert market.submission["challenged"]["result"] == "answered"
    assert "challenge" not in market.submission  # nothing more to confirm: ours stands
    assert gauge(metrics, "oracle_challenges_total", venue="reality", result="answered") == 1
    assert len(world.our_transactions()) == 1

    # The second would break the total cap (INITIAL already at risk): refused, not sent.
    store.decide_review(items[capped].id, "YES", "it happened", "alice")
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    assert store.get_market(capped).state == MarketState.FAILED_RETRY
    assert "bond refused (total_cap)" in store.audit(capped)[-1].reason
    assert gauge(metrics, "oracle_bond_refusals_total", venue="reality", reason="total_cap") == 1
    assert world.history(capped) == [(OTHER, MIN_BOND, NO_WORD)]

    # Both finalize: ours stood and is claimed; the refused one is recorded, never sent.
    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    assert_settled_as(store, countered, "YES")
    assert store.get_market(capped).state == MarketState.FINAL
    assert_settled_as(store, capped, "NO")
    assert "challenge_moot" in [a.event for a in store.audit(capped)]
    assert len(world.our_transactions()) == 3  # the counter-answer, claim, withdraw
    assert world.reverted() == []
    store.engine.dispose()


def test_commit_reveal_answers_by_a_commitment_then_its_reveal_and_claims_through_it(
    world: RealityWorld, database_url: str
) -> None:
    market_id = world.ask("Was the answer committed before it was shown?", AGREED)
    settings = world.config(database_url, source={"commit_reveal": True})
    one_pass(settings)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    [(answerer, bond, entry)] = world.history(market_id)
    # The history holds the commitment (not the answer); the reveal made YES the best one.
    assert (answerer, bond) == (OURS, INITIAL)
    assert entry != YES_WORD
    assert world.view(market_id).best_answer == YES_WORD
    assert len(world.our_transactions()) == 2  # the commitment, its reveal
    keys = intent_keys(store)
    assert len([k for k in keys if k.startswith("reality-commit:")]) == 1
    assert len([k for k in keys if k.startswith("reality-reveal:")]) == 1
    one_pass(settings)
    assert len(world.our_transactions()) == 2  # once

    world.elapse(TIMEOUT + 1)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    assert_settled_as(store, market_id, "YES")
    labels = {"venue": "reality", "token": "native"}
    # Claimed through the revealed commitment: the bounty and our bond back.
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == BOUNTY + INITIAL
    assert world.held_for_us() == 0
    assert len(world.our_transactions()) == 4  # + claim, withdraw
    assert world.reverted() == []
    store.engine.dispose()


async def commit_then_crash(
    settings: Settings, qid: str, *, planned: int = 0, bond: int = INITIAL
) -> int:
    """What a daemon leaves when it dies after its commitment of YES (over `planned`) was
    included and before the reveal was sent: the commitment on-chain and in its intent
    store, no reveal; the commitment's nonce."""
    assembly = assemble(settings)
    try:
        venue = assembly.daemon.resolvers["reality"]
        assert isinstance(venue, RealityVenue)
        await venue.start()
        assert venue._parts is not None
        answerer = venue._parts.answerer
        committed = await answerer.commit(qid, YES_WORD, planned_bond=planned, bond=bond)
        assert committed.answered
        return await answerer.commitment_nonce(bytes.fromhex(qid[2:]), YES_WORD, bond)
    finally:
        await assembly.close()


def test_a_commitment_left_unrevealed_by_a_crash_is_revealed_once_at_the_restart(
    world: RealityWorld, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    market_id = world.ask("Was the commitment revealed after the crash?", AGREED)
    settings = world.config(database_url, source={"commit_reveal": True})
    qid = market_id.split(":")[1]

    caplog.set_level("DEBUG")
    nonce = asyncio.run(commit_then_crash(settings, qid))
    assert world.view(market_id).best_answer != YES_WORD  # committed, not revealed
    assert len(world.our_transactions()) == 1

    one_pass(settings)

    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.SUBMITTED
    assert world.view(market_id).best_answer == YES_WORD
    assert [(a, b) for a, b, _ in world.history(market_id)] == [(OURS, INITIAL)]
    assert len(world.our_transactions()) == 2  # no second commitment: the reveal only
    one_pass(settings)
    assert len(world.our_transactions()) == 2
    # The nonce is recomputed from the signer, never written to a log.
    assert "reality.revealed" in caplog.text
    for shown in (str(nonce), f"{nonce:x}"):
        assert shown not in caplog.text
    assert world.reverted() == []
    store.engine.dispose()


def test_a_reality_venue_with_no_contract_stops_the_start_naming_its_setting(
    anvil: Anvil, tmp_path: Path
) -> None:
    source = {"kind": "reality", "contract_address": OTHER, "bond": {"initial_wei": INITIAL}}
    with pytest.raises(
        SetupError, match=r"^market_sources\[reality\]\.contract_address: no contract at"
    ):
        start_once(tmp_path, anvil.url, OUR_KEY, source)


def test_a_daemon_killed_between_broadcast_and_confirmation_answers_once(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the crash-proof answer land once?", AGREED)
    world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        daemon=CRASH_DAEMON,
    )
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    kill_once_broadcast(world.anvil, OURS, config, log, "the answer")
    assert world.history(market_id) == []  # broadcast, not mined
    store = open_store(load_settings(config))
    try:
        restart_until(
            world.anvil,
            config,
            log,
            lambda: store.get_market(market_id).state == MarketState.SUBMITTED,
            "the market to be submitted",
        )
    finally:
        store.engine.dispose()
    assert world.history(market_id) == [(OURS, INITIAL, YES_WORD)]
    assert len(world.our_transactions()) == 1
    assert world.reverted() == []


class _RacedReality(RealityETH):
    """Another account's answer is mined right after our first read of the question."""

    other: RealityAnswerer | None = None

    async def get_question(self, qid: bytes | str) -> QuestionView:
        view = await super().get_question(qid)
        if self.other is not None:
            other, self.other = self.other, None
            assert (await other.answer(qid, NO_WORD)).answered
        return view


def test_a_round_taken_while_we_answer_is_recorded_not_failed(world: RealityWorld) -> None:
    """Someone answers between the venue's decision and its send: nothing of ours is sent,
    and the delivery is decided again at once (their answer recorded, with the
    disagreement), not failed."""
    title = "Was the race lost before sending?"
    market_id = world.ask(title, AGREED)
    qid = market_id.split(":")[1]
    config = RealitySourceConfig(
        kind="reality", contract_address=world.reality, bond={"initial_wei": INITIAL}
    )

    async def run() -> None:
        async with (
            manager_for(world.anvil.url, key=OUR_KEY) as manager,
            manager_for(world.anvil.url, key=OTHER_KEY) as other,
        ):
            reality = _RacedReality(manager.pool, world.reality)
            reality.other = RealityAnswerer(other, RealityETH(other.pool, world.reality))
            answerer = RealityAnswerer(manager, reality)

            async def open_chain() -> RealityParts:
                source = QuestionSource(manager.pool, world.reality, InMemoryCheckpointStore())
                return RealityParts(manager.pool, manager, reality, answerer, source, 0)

            venue = RealityVenue(config, open_chain)
            details = {
                "question_id": qid,
                "template_id": 0,
                "text": world.texts[title],
                "block_number": 0,
            }
            market = MarketRef(market_id, "reality", qid, ("YES", "NO"), details)
            receipt = await venue.propose(market, "YES", "checksum")
            assert receipt.disagreement is not None
            assert "answered NO (bond 100000000000000000 wei)" in receipt.disagreement
            assert receipt.details["answered_by_other"] is True
            skipped = await manager.intent(answerer.answer_key(qid, 0))
            assert skipped is not None
            assert skipped.state == IntentState.SKIPPED

    asyncio.run(run())
    assert world.our_transactions() == []
    assert world.history(market_id) == [(OTHER, MIN_BOND, NO_WORD)]
    assert world.reverted() == []


def test_a_question_is_not_researched_before_it_opens(world: RealityWorld, tmp_path: Path) -> None:
    opens = int(world.anvil.block()["timestamp"], 16) + 1000
    market_id = world.ask("Will the later question be answered?", AGREED, opening_ts=opens)
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}")
    one_pass(settings)
    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.DISCOVERED  # not due before opening_ts, by block time
    assert market.resolve_after == opens
    assert store.latest_run(market_id, "done") is None
    world.elapse(1000)
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.SUBMITTED
    assert world.history(market_id) == [(OURS, INITIAL, YES_WORD)]
    store.engine.dispose()


def test_a_daemon_killed_with_its_commitment_unmined_commits_once_and_reveals_once(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the crash-proof commitment land once?", AGREED)
    world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        daemon=CRASH_DAEMON,
        source={"commit_reveal": True},
    )
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    kill_once_broadcast(world.anvil, OURS, config, log, "the commitment")
    assert world.history(market_id) == []  # broadcast, not mined
    store = open_store(load_settings(config))
    try:
        restart_until(
            world.anvil,
            config,
            log,
            lambda: store.get_market(market_id).state == MarketState.SUBMITTED,
            "the market to be submitted",
        )
    finally:
        store.engine.dispose()
    assert [(a, b) for a, b, _ in world.history(market_id)] == [(OURS, INITIAL)]
    assert world.view(market_id).best_answer == YES_WORD
    assert len(world.our_transactions()) == 2  # one commitment, one reveal
    assert world.reverted() == []


def test_a_commitment_whose_reveal_window_passed_goes_to_a_person_and_is_never_revealed(
    world: RealityWorld, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    market_id = world.ask("Was the commitment revealed in time?", AGREED)
    settings = world.config(database_url, source={"commit_reveal": True})
    qid = market_id.split(":")[1]
    asyncio.run(commit_then_crash(settings, qid))
    # The daemon stays down longer than the reveal window (the question's timeout / 8).
    world.elapse(TIMEOUT // 8 + 1)
    caplog.set_level("INFO")
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.NEEDS_REVIEW
    last = store.audit(market_id)[-1]
    assert last.event == "answer_lost"
    assert f"our commitment on question {qid} with a bond of {INITIAL} wei" in last.reason
    assert "can no longer be revealed" in last.reason
    [item] = store.reviews()
    assert "the bond is lost" in item.reasons[0]
    assert "deciding an outcome answers again over it" in item.reasons[0]
    assert market.submission["answers_lost"] == [
        {"kind": "commitment_unrevealed", "question_id": qid, "bond": INITIAL}
    ]
    assert gauge(metrics, "oracle_review_reasons_total", reason="answer_lost") == 1
    labels = {"venue": "reality", "token": "native", "reason": "reveal_missed"}
    assert gauge(metrics, "oracle_bonds_lost_total", **labels) == INITIAL
    assert "reality.reveal_missed" in caplog.text
    assert "market.answer_lost" in caplog.text
    assert not [k for k in intent_keys(store) if k.startswith("reality-reveal:")]
    one_pass(settings)  # never retried on its own
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    assert len(store.reviews()) == 1
    assert len(world.our_transactions()) == 1  # the lost commitment only

    # A person decides again: a new commitment at double the lost one's bond, revealed.
    store.decide_review(item.id, "YES", "it happened", "alice")
    one_pass(settings)
    answered = store.get_market(market_id)
    assert answered.state == MarketState.SUBMITTED
    assert [(a, b) for a, b, _ in world.history(market_id)] == [
        (OURS, INITIAL),
        (OURS, 2 * INITIAL),
    ]
    assert world.view(market_id).best_answer == YES_WORD
    assert len(world.our_transactions()) == 3  # + the commitment and its reveal
    assert len([k for k in intent_keys(store) if k.startswith("reality-reveal:")]) == 1
    assert world.reverted() == []
    store.engine.dispose()


def test_a_superseded_answer_sent_to_a_person_is_defended_once_or_accepted_as_lost(
    world: RealityWorld, database_url: str
) -> None:
    defended = world.ask("Should our superseded answer be defended?", AGREED)
    accepted = world.ask("Should their answer over ours be accepted?", AGREED)
    capped = world.ask("Would a defence over two answers break the cap?", AGREED)
    # defend: false sends superseded answers to a person; after_review lets them defend.
    settings = world.config(
        database_url,
        source={"counter_answer": "after_review"},
        max_per_question_wei=5 * INITIAL,
    )
    one_pass(settings)
    for market_id in (defended, accepted, capped):
        assert world.counter(market_id, NO_WORD) == 2 * INITIAL
    # A third account answers over them: a defence would need 8x.
    assert world.counter(capped, NO_WORD, key=THIRD_KEY) == 4 * INITIAL
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    one_pass(settings)  # seen again: no second item

    store = open_store(settings)
    items = {item.market_id: item for item in store.reviews()}
    assert set(items) == {defended, accepted, capped}
    for market_id in (defended, accepted, capped):
        market = store.get_market(market_id)
        assert market.state == MarketState.DISPUTED
        assert market.submission["challenge"] == "defend"
        assert market.submission["their_outcome"] == "NO"
        assert market.submission["superseded_by"] == (THIRD if market_id == capped else OTHER)
    reasons = items[defended].reasons
    assert f"answered NO over our YES (bond {2 * INITIAL} wei" in reasons[0]
    assert "sends superseded answers to a person (defend: false)" in reasons[0]
    assert "confirms a defence of our superseded answer" in reasons[1]
    assert store.get_market(defended).submission["bond_seen"] == 2 * INITIAL
    assert gauge(metrics, "oracle_venue_disagreements_total", venue="reality") == 3
    assert _attention_labels(metrics, defended)  # shown to people
    assert len(world.our_transactions()) == 3  # the three first answers, nothing else

    assert store.decide_review(items[defended].id, "YES", "it did", "alice").state == (
        MarketState.CHALLENGING
    )
    assert store.decide_review(items[accepted].id, "NO", "they are right", "alice").state == (
        MarketState.DISPUTED
    )
    store.decide_review(items[capped].id, "YES", "it did", "alice")
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    one_pass(settings)  # the defence is not sent twice

    # Defended once at double their bond, then followed as our answer.
    assert world.history(defended) == [
        (OURS, INITIAL, YES_WORD),
        (OTHER, 2 * INITIAL, NO_WORD),
        (OURS, 4 * INITIAL, YES_WORD),
    ]
    market = store.get_market(defended)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["answerer"] == OURS
    assert market.submission["challenged"]["result"] == "answered"
    assert market.submission["challenged"]["action"] == "defend"
    assert gauge(metrics, "oracle_challenges_total", venue="reality", result="answered") == 1
    # Accepted: nothing sent, the market follows the question.
    assert len(world.history(accepted)) == 2
    assert store.get_market(accepted).state == MarketState.DISPUTED
    # Past the per-question cap (INITIAL + 8x INITIAL > 5x): refused and recorded, not sent.
    assert len(world.history(capped)) == 3
    assert store.get_market(capped).state == MarketState.FAILED_RETRY
    assert "bond refused (per_question_cap)" in store.audit(capped)[-1].reason
    labels = {"venue": "reality", "reason": "per_question_cap"}
    assert gauge(metrics, "oracle_bond_refusals_total", **labels) == 1
    assert len(world.our_transactions()) == 4  # + the one defence

    world.elapse(TIMEOUT + 1)
    _defended_claimed_the_others_lost(world, settings, store, defended, (accepted, capped))
    store.engine.dispose()


def _defended_claimed_the_others_lost(
    world: RealityWorld,
    settings: Settings,
    store: Store,
    defended: str,
    lost_ones: tuple[str, str],
) -> None:
    accepted, capped = lost_ones
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    assert_settled_as(store, defended, "YES")
    assert store.get_market(accepted).state == MarketState.FINAL
    assert_settled_as(store, accepted, "NO")
    assert store.audit(accepted)[-1].event == "dispute_upheld"
    assert store.get_market(capped).state == MarketState.FINAL
    assert_settled_as(store, capped, "NO")
    native = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimed_total", **native) == WON_AFTER_DEFENCE
    # Our first answers on the two questions that finalized on their answer are lost.
    lost = gauge(metrics, "oracle_bonds_lost_total", **native, reason="outanswered")
    assert lost == 2 * INITIAL
    assert len(world.our_transactions()) == 6  # + claim, withdraw on the defended one
    assert world.reverted() == []


def test_a_defence_whose_commitment_missed_its_reveal_window_goes_to_a_person(
    world: RealityWorld, database_url: str
) -> None:
    market_id = world.ask("Was the defence revealed in time?", AGREED)
    settings = world.config(
        database_url, source={"commit_reveal": True, "counter_answer": "after_review"}
    )
    qid = market_id.split(":")[1]
    one_pass(settings)  # our YES, committed and revealed
    world.counter(market_id, NO_WORD)
    one_pass(settings)
    store = open_store(settings)
    [item] = store.reviews()
    assert store.decide_review(item.id, "YES", "it did", "alice").state == (MarketState.CHALLENGING)
    # The daemon dies after committing the defence, and stays down past its reveal window.
    asyncio.run(commit_then_crash(settings, qid, planned=2 * INITIAL, bond=4 * INITIAL))
    world.elapse(TIMEOUT // 8 + 1)

    one_pass(settings)

    market = store.get_market(market_id)
    assert market.state == MarketState.NEEDS_REVIEW
    assert store.audit(market_id)[-1].event == "answer_lost"
    assert "challenge_pending" not in market.submission  # the confirmed defence is over
    assert market.submission["answers_lost"][-1]["bond"] == 4 * INITIAL
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    # Our commitment and reveal, the lost defence's commitment: no reveal of it, ever.
    assert len(world.our_transactions()) == 3
    assert world.view(market_id).best_answer == NO_WORD
    assert world.reverted() == []
    store.engine.dispose()
