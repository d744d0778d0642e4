"""End to end on UMA's real Optimistic Oracle V3 (compiled from @uma/core) on anvil, with
replay agents: a configured claim market asserted once with its proof in the claim,
settled true after liveness and final in the accuracy ledger; a review verdict that posts
no bond, then a person's decision on it asserted; a bond the outstanding cap refuses; a
dispute followed, then settled by UMA's vote; verdicts due together asserted in one
multicall; another asserter's wrong claim opening a disagreement item (and hostile claim
bytes skipped); a daemon SIGKILLed between broadcasting a multicall and its confirmation
asserting each claim once; with `dispute: after_review`, a person's confirmation disputing
another's wrong assertion once (followed to the vote and settled), a declined one sending
nothing, a late one recorded, a costly one refused by the cap, and a dispute sent before a
crash (or a SIGKILL between its broadcast and confirmation) recorded at the restart, never
sent again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.chain.contracts import Deployment, load_artifact
from oracle.chain.events import EventDecoder
from oracle.config import Settings, load_settings
from oracle.console.evidence import gather
from oracle.core.claims import read_claim
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.service import _market_ref
from oracle.errors import SetupError
from oracle.store.repository import Store
from oracle.store.reviews import Seen
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import (
    MAX_UINT256,
    MOCK_ORACLE_ANCILLARY,
    OPTIMISTIC_ORACLE_V3,
    TESTNET_ERC20,
    Erc20,
)
from oracle.venues.uma.binding_v3 import (
    ASSERT_BATCH_PREFIX,
    ASSERT_PREFIX,
    ASSERT_TRUTH,
    DISPUTE_ASSERTION_PREFIX,
    AssertionView,
    Claim,
    OptimisticOracleV3,
    UmaAsserter,
)
from oracle.venues.uma.stack import deploy_optimistic_oracle_v3, deploy_uma_stack
from oracle.venues.uma.venue_v3 import UmaV3Venue

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from .test_uma_e2e import call
from .venue_world import (
    CRASH_DAEMON,
    gauge,
    kill_once_broadcast,
    one_pass,
    restart_until,
    start_once,
)
from .venue_world import intent_keys as _intent_keys

LIVENESS = 7200
FINAL_FEE = 5 * 10**18
BOND = 2 * FINAL_FEE  # OOv3's minimum bond: the final fee over its 50 % burn
OUR_KEY, OTHER_KEY = DEV_KEYS[2], DEV_KEYS[3]
OURS, OTHER, STRANGER = DEV_ADDRESSES[2], DEV_ADDRESSES[3], DEV_ADDRESSES[0]
SOURCE = "uma-v3"
AGENTS = ("alpha", "beta", "gamma")
YES_AGREED = [("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6)]
NO_AGREED = [("alpha", "NO", 0.9), ("beta", "NO", 0.85), ("gamma", "YES", 0.6)]
CONTESTED = [("alpha", "YES", 0.7), ("beta", "NO", 0.7), ("gamma", "UNDETERMINED", 0.5)]


class V3World:
    def __init__(self, anvil: Anvil, tmp_path: Path) -> None:
        self.anvil = anvil
        self.tmp_path = tmp_path
        self.replays = tmp_path / "replays"
        self.replays.mkdir()
        self.markets: list[dict[str, Any]] = []
        self.oracle, self.currency, self.mock_vote, deployment = asyncio.run(self._deploy())
        self.deployment_file = tmp_path / "uma-deployment.json"
        deployment.save(self.deployment_file)

    async def _deploy(self) -> tuple[str, str, str, Deployment]:
        async with manager_for(self.anvil.url) as deployer:
            block = int(self.anvil.rpc("eth_blockNumber"), 16)
            stack = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
            oracle = await deploy_optimistic_oracle_v3(deployer, stack, liveness=LIVENESS)
            for account in (OURS, OTHER, STRANGER):
                await call(
                    deployer, TESTNET_ERC20, stack.currency, "allocateTo", account, 20 * BOND
                )
            deployment = Deployment(
                chain_id=deployer.chain_id,
                block_number=block,
                deployer=deployer.address,
                contracts={**stack.contracts(), OPTIMISTIC_ORACLE_V3: oracle},
            )
        return oracle, stack.currency, stack.mock_oracle, deployment

    def record(self, question: str, votes: list[tuple[str, str, float]]) -> None:
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
            market_id=question[:40],
            question=question,
            outcomes=["YES", "NO"],
        )
        (self.replays / f"{len(list(self.replays.iterdir()))}.json").write_text(
            json.dumps(document)
        )

    def claim_market(self, market_id: str, question: str, votes: list[Any]) -> str:
        """A claim market in the venue's configuration, with the agents' answers."""
        self.markets.append(
            {"id": market_id, "question": question, "resolve_after": "2020-01-01T00:00:00Z"}
        )
        self.record(question, votes)
        return f"{SOURCE}:claim:{market_id}"

    def config(
        self,
        database_url: str,
        daemon: dict[str, Any] | None = None,
        *,
        risk: dict[str, Any] | None = None,
        second_opinion: dict[str, Any] | None = None,
        dispute: str = "never",
    ) -> Settings:
        source: dict[str, Any] = {
            "kind": "uma_v3",
            "name": SOURCE,
            "deployment_file": str(self.deployment_file),
            "markets": self.markets,
            "risk": risk or {},
            "dispute": dispute,
        }
        if second_opinion is not None:
            source["second_opinion"] = second_opinion
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
            "market_sources": [source],
            "chain": {
                "rpc": {"urls": [self.anvil.url]},
                "signer": {"type": "dev_private_key", "dev_private_key": OUR_KEY},
                "tx": {"confirmations": 1, "poll_interval": 0.05},
                "scanner": {"confirmations": 0},
            },
        }
        path = self.tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return load_settings(path)

    def assertions_by(self, account: str) -> list[dict[str, Any]]:
        """The AssertionMade events of `account` on the canonical chain."""
        decoder = EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V3).abi, "AssertionMade")
        logs = self.anvil.rpc(
            "eth_getLogs",
            {
                "address": self.oracle,
                "topics": [decoder.topic, None, "0x" + "00" * 12 + account[2:].lower()],
                "fromBlock": "0x0",
                "toBlock": "latest",
            },
        )
        return [decoder.decode(log).args for log in logs]

    def disputes_of(self, assertion_id: str) -> list[dict[str, Any]]:
        """The AssertionDisputed events of `assertion_id` on the canonical chain."""
        decoder = EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V3).abi, "AssertionDisputed")
        logs = self.anvil.rpc(
            "eth_getLogs",
            {
                "address": self.oracle,
                "topics": [decoder.topic, assertion_id],
                "fromBlock": "0x0",
                "toBlock": "latest",
            },
        )
        return [decoder.decode(log).args for log in logs]

    def view(self, assertion_id: str) -> AssertionView:
        async def run() -> AssertionView:
            async with manager_for(self.anvil.url) as reader:
                return await OptimisticOracleV3(reader.pool, self.oracle).get_assertion(
                    assertion_id
                )

        return asyncio.run(run())

    def balance(self, account: str) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                return await Erc20(reader.pool, self.currency).balance_of(account)

        return asyncio.run(run())

    def assert_as(self, key: str, text: bytes, bond: int = BOND) -> str:
        """Someone else asserts `text` (with the minimum bond); the assertion id."""

        async def run() -> str:
            async with manager_for(self.anvil.url, key=key) as other:
                oracle = OptimisticOracleV3(other.pool, self.oracle)
                claim = Claim(text=text, bond=bond, liveness=LIVENESS, currency=self.currency)
                made = (await UmaAsserter(other, oracle).assert_truth(claim)).assertion
                assert made is not None
                return made.assertion_id

        return asyncio.run(run())

    def dispute(self, assertion_id: str) -> None:
        async def run() -> None:
            async with manager_for(self.anvil.url, key=OTHER_KEY) as other:
                await call(other, TESTNET_ERC20, self.currency, "approve", self.oracle, MAX_UINT256)
                await call(
                    other,
                    OPTIMISTIC_ORACLE_V3,
                    self.oracle,
                    "disputeAssertion",
                    bytes.fromhex(assertion_id[2:]),
                    OTHER,
                )

        asyncio.run(run())

    def vote(self, assertion_id: str, truth: bool) -> None:
        """UMA's vote (MockOracleAncillary) answers a disputed assertion."""

        async def run() -> None:
            async with manager_for(self.anvil.url) as deployer:
                oracle = OptimisticOracleV3(deployer.pool, self.oracle)
                raw_id = bytes.fromhex(assertion_id[2:])
                stamp = await oracle.read("stampAssertion", raw_id)
                view = await oracle.get_assertion(assertion_id)
                await call(
                    deployer,
                    MOCK_ORACLE_ANCILLARY,
                    self.mock_vote,
                    "pushPrice",
                    ASSERT_TRUTH.encode().ljust(32, b"\0"),
                    view.assertion_time,
                    stamp,
                    10**18 if truth else 0,
                )

        asyncio.run(run())

    def pass_time(self) -> None:
        self.anvil.rpc("evm_increaseTime", LIVENESS + 1)
        self.anvil.mine()

    def our_transactions(self) -> list[dict[str, Any]]:
        return [r for r in self.anvil.receipts_in_chain() if r["from"].lower() == OURS.lower()]

    def reverted(self) -> list[str]:
        return [
            r["transactionHash"]
            for r in self.anvil.receipts_in_chain()
            if int(r["status"], 16) != 1
        ]


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> V3World:
    return V3World(anvil, tmp_path)


def assert_settled_as(store: Store, market_id: str, outcome: str) -> None:
    ledger = store.final_outcome(market_id)
    assert ledger is not None
    assert (ledger.outcome, ledger.finality) == (outcome, "uma-settlement")


def test_a_claim_is_asserted_once_settles_true_a_review_posts_no_bond_a_cap_refuses(
    world: V3World, database_url: str
) -> None:
    first = world.claim_market("launch", "Did the launch happen before 1 June?", YES_AGREED)
    second = world.claim_market("landing", "Did the landing happen before 1 June?", YES_AGREED)
    contested = world.claim_market("chess", "Who won the local chess final?", CONTESTED)
    # Room for one bond: of the two verdicts to assert, one is refused.
    settings = world.config(database_url, risk={"max_bond_outstanding": 15})
    before = world.balance(OURS)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    states = {m: store.get_market(m).state for m in (first, second)}
    assert sorted(states.values()) == sorted([MarketState.SUBMITTED, MarketState.FAILED_RETRY])
    asserted = next(m for m, s in states.items() if s == MarketState.SUBMITTED)
    refused = next(m for m, s in states.items() if s == MarketState.FAILED_RETRY)
    assert "bond refused (outstanding_cap)" in store.audit(refused)[-1].reason
    assert gauge(metrics, "oracle_bond_refusals_total", venue=SOURCE, reason="outstanding_cap") == 1
    market = store.get_market(asserted)
    [made] = world.assertions_by(OURS)
    # The claim names the market, the verdict and the proof's checksum.
    claim = made["claim"].decode()
    assert f"(market {asserted}) is YES." in claim
    assert claim.endswith(f"Proof: sha256:{market.proof_checksum}.")
    assert market.submission["assertion_id"] == "0x" + made["assertionId"].hex()
    # The bond's currency named with it, for the reviewer (its symbol() and decimals()).
    assert (market.submission["currency_symbol"], market.submission["currency_decimals"]) == (
        "BOND",
        18,
    )
    assert market.window_ends_at == made["expirationTime"]
    labels = {"venue": SOURCE, "token": world.currency}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == BOND
    # A review verdict posts no bond: one assertion, one bond, one assertion intent.
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.balance(OURS) == before - BOND
    assert len([k for k in _intent_keys(store) if k.startswith(ASSERT_PREFIX)]) == 1

    world.pass_time()
    one_pass(settings)

    assert store.get_market(asserted).state == MarketState.FINAL
    assert_settled_as(store, asserted, "YES")
    view = world.view(market.submission["assertion_id"])
    assert view.settled
    assert view.settlement_resolution
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.reverted() == []
    # The bond came back; the refused market was asserted once the cap allowed it.
    mine = world.assertions_by(OURS)
    assert [a["claim"].decode().count(f"(market {refused})") for a in mine[1:]] in ([], [1])
    assert world.balance(OURS) == before - BOND * (len(mine) - 1)
    store.engine.dispose()


def test_verdicts_due_together_are_asserted_in_one_multicall(
    world: V3World, database_url: str
) -> None:
    markets = [
        world.claim_market(f"batch-{n}", f"Did batched event {n} happen?", YES_AGREED)
        for n in range(3)
    ]
    settings = world.config(database_url)
    before = world.balance(OURS)

    one_pass(settings)

    store = open_store(settings)
    rows = [store.get_market(m) for m in markets]
    assert {row.state for row in rows} == {MarketState.SUBMITTED}
    made = world.assertions_by(OURS)
    assert len(made) == 3
    ids = {"0x" + m["assertionId"].hex() for m in made}
    assert {row.submission["assertion_id"] for row in rows} == ids
    # One transaction (after the one approval) asserted all three, each naming its market.
    [multicall] = [r for r in world.our_transactions() if r["to"].lower() == world.oracle.lower()]
    assert {row.submission["reference"] for row in rows} == {multicall["transactionHash"]}
    assert {row.submission["asserted_with"] for row in rows} == {3}
    shared = int(multicall["gasUsed"], 16) // 3
    assert {row.submission["gas_used"] for row in rows} == {shared}
    for row in rows:
        [claim] = [
            m["claim"].decode()
            for m in made
            if "0x" + m["assertionId"].hex() == row.submission["assertion_id"]
        ]
        assert f"(market {row.id}) is YES. Proof: sha256:{row.proof_checksum}." in claim
    assert world.balance(OURS) == before - 3 * BOND
    assert [k for k in _intent_keys(store) if k.startswith(ASSERT_BATCH_PREFIX)] != []
    assert world.reverted() == []
    store.engine.dispose()


def test_a_dispute_is_followed_and_the_vote_settles_it_a_persons_decision_is_asserted(
    world: V3World, database_url: str
) -> None:
    market_id = world.claim_market("vote", "Was the vote's result announced?", YES_AGREED)
    decided = world.claim_market("decided", "Who won the club's chess final?", CONTESTED)
    settings = world.config(database_url)
    one_pass(settings)
    store = open_store(settings)
    assertion_id = store.get_market(market_id).submission["assertion_id"]
    [item] = store.reviews()
    assert item.market_id == decided
    assert len(world.assertions_by(OURS)) == 1  # none for the verdict sent to a person
    store.decide_review(item.id, "NO", "the club's records say so", "alice")

    world.dispute(assertion_id)
    world.pass_time()  # the window is over: the watch looks at the assertion
    one_pass(settings)

    # The person's decision is asserted, with the proof of that decision.
    row = store.get_market(decided)
    assert row.state == MarketState.SUBMITTED
    [claim] = [
        a["claim"].decode() for a in world.assertions_by(OURS) if decided in a["claim"].decode()
    ]
    assert claim.endswith(f"(market {decided}) is NO. Proof: sha256:{row.proof_checksum}.")
    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert f"disputed by {OTHER}" in store.audit(market_id)[-1].reason
    assert not world.view(assertion_id).settled  # no vote yet: nothing settled, nothing sent

    world.vote(assertion_id, truth=True)
    before = world.balance(OURS)
    one_pass(settings)

    assert store.get_market(market_id).state == MarketState.FINAL
    assert_settled_as(store, market_id, "YES")
    # Both bonds to us, less the half of one burned to UMA's Store.
    assert world.balance(OURS) == before + BOND + BOND // 2
    assert world.reverted() == []
    store.engine.dispose()


def test_another_asserters_wrong_claim_opens_a_disagreement_item(
    world: V3World, database_url: str
) -> None:
    wrong = b"The bridge reopened to traffic on 3 March 2026."
    right = b"The museum opened its new wing in 2026."
    wrong_id = world.assert_as(OTHER_KEY, wrong)
    world.assert_as(OTHER_KEY, right)
    world.assert_as(OTHER_KEY, b"\xff\xfe\x00\x01\x7f")  # nothing readable: skipped
    world.assert_as(DEV_KEYS[0], b"A stranger's claim, not watched.")
    prefixed = b"Watched: a stranger's claim with the watched prefix."
    world.assert_as(DEV_KEYS[0], prefixed)
    world.record(f"Is this claim true? {read_claim(wrong)}", NO_AGREED)
    world.record(f"Is this claim true? {read_claim(right)}", YES_AGREED)
    world.record(f"Is this claim true? {read_claim(prefixed)}", YES_AGREED)
    settings = world.config(
        database_url, second_opinion={"asserters": [OTHER], "claim_prefixes": ["Watched:"]}
    )
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    assert gauge(metrics, "oracle_source_errors_total", source=SOURCE, kind="malformed") == 1
    store = open_store(settings)
    markets = {m.id: m for m in store.markets()}
    assert len(markets) == 3  # the watched (asserter or prefix), readable ones
    assert {m.details["asserter"] for m in markets.values()} == {OTHER, STRANGER}
    named = {
        (m.details["currency_symbol"], m.details["currency_decimals"]) for m in markets.values()
    }
    assert named == {("BOND", 18)}
    market_id = f"{SOURCE}:assertion:{wrong_id}"
    market = markets[market_id]
    assert market.state == MarketState.SUBMITTED
    assert market.decided_outcome == "NO"
    submission = market.submission
    assert submission["asserted_by_other"] is True
    assert (submission["their_outcome"], submission["our_outcome"]) == ("YES", "NO")
    assert submission["agrees"] is False
    [item] = store.reviews()
    assert item.market_id == market_id
    assert "the bridge reopened" in item.reasons[0].lower()
    assert "our verdict is NO" in item.reasons[0]
    assert gauge(metrics, "oracle_venue_disagreements_total", venue=SOURCE) == 1
    assert world.our_transactions() == []  # a second opinion sends nothing

    world.pass_time()
    one_pass(settings)
    # Nobody disputed: the claim stood, final as YES, the item closed saying so.
    assert store.get_market(market_id).state == MarketState.FINAL
    assert_settled_as(store, market_id, "YES")
    assert store.reviews() == []
    [closed] = store.reviews("closed")
    assert closed.decided_reason == "the venue settled on YES"
    assert world.our_transactions() == []
    store.engine.dispose()


def watch_wrong_claims(world: V3World, database_url: str, *texts: str, **config: Any) -> Settings:
    """Another asserter's claims, each wrong by our agents, watched with dispute:
    after_review."""
    for text in texts:
        world.record(f"Is this claim true? {text}", NO_AGREED)
    return world.config(
        database_url,
        second_opinion={"asserters": [OTHER]},
        dispute="after_review",
        **config,
    )


def test_a_person_confirming_a_disagreement_disputes_the_assertion_once_the_vote_settles_it(
    world: V3World, database_url: str
) -> None:
    wrong = "The dam on the upper river was completed in 1990."
    assertion_id = world.assert_as(OTHER_KEY, wrong.encode())
    settings = watch_wrong_claims(world, database_url, wrong)
    one_pass(settings)

    store = open_store(settings)
    market_id = f"{SOURCE}:assertion:{assertion_id}"
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["challenge"] == "dispute"
    [item] = store.reviews()
    assert "our verdict is NO, not YES" in item.reasons[0]
    assert "deciding NO (or another outcome than theirs) confirms a dispute" in item.reasons[1]
    assert gather(store, item.id)["review"]["challenge"] == {
        "action": "dispute",
        "confirms": "a dispute against their answer",
        "their_outcome": "YES",
        "their_account": OTHER,
        "our_outcome": "NO",
        "pending": None,
        "done": None,
    }
    # Nothing is sent before a person confirms, pass after pass.
    one_pass(settings)
    assert world.our_transactions() == []
    assert not world.view(assertion_id).disputed

    latest = store.latest_consensus(market_id)
    assert latest is not None
    confirmed = store.decide_review(
        item.id,
        "NO",
        "the dam was completed in 1994",
        "alice",
        seen=Seen(latest.id, latest.checksum),
    )
    assert confirmed.state == MarketState.CHALLENGING
    before = world.balance(OURS)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    view = world.view(assertion_id)
    assert (view.disputer, view.asserter, view.settled) == (OURS, OTHER, False)
    disputed = store.get_market(market_id)
    assert disputed.state == MarketState.DISPUTED
    assert disputed.submission["challenged"]["result"] == "disputed"
    assert disputed.submission["challenged"]["by"] == "alice"
    assert disputed.submission["disputer"] == OURS
    # The assertion's bond, in its currency, once; counted among our bonds at risk.
    assert world.balance(OURS) == before - BOND
    assert gauge(metrics, "oracle_challenges_total", venue=SOURCE, result="disputed") == 1
    labels = {"venue": SOURCE, "token": world.currency}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == BOND
    events = [a.event for a in store.audit(market_id)]
    assert events[-2:] == ["challenge_confirmed", "challenge_disputed"]

    # Passes after it follow the dispute, never dispute again.
    one_pass(settings)
    assert len(world.disputes_of(assertion_id)) == 1
    assert len([k for k in _intent_keys(store) if k.startswith(DISPUTE_ASSERTION_PREFIX)]) == 1
    assert store.get_market(market_id).state == MarketState.DISPUTED

    world.vote(assertion_id, truth=False)
    one_pass(settings)

    # Settled by us once the vote had a price: false, final as NO, both bonds to us less
    # the half of one burned to UMA's Store.
    assert store.get_market(market_id).state == MarketState.FINAL
    assert_settled_as(store, market_id, "NO")
    view = world.view(assertion_id)
    assert (view.settled, view.settlement_resolution) == (True, False)
    assert world.balance(OURS) == before + BOND // 2
    assert world.reverted() == []
    store.engine.dispose()


def test_a_declined_dispute_sends_nothing_a_late_one_is_recorded_a_costly_one_refused(
    world: V3World, database_url: str
) -> None:
    texts = {
        "declined": "The ferry service resumed on 2 May 2026.",
        "late": "The library reopened on 9 May 2026.",
        "capped": "The stadium roof was replaced in April 2026.",
    }
    ids = {
        name: world.assert_as(OTHER_KEY, text.encode(), bond=2 * BOND if name == "capped" else BOND)
        for name, text in texts.items()
    }
    # Room for one assertion's bond (10), not for the costly one's (20).
    settings = watch_wrong_claims(
        world, database_url, *texts.values(), risk={"max_bond_per_assertion": 15}
    )
    one_pass(settings)
    store = open_store(settings)
    markets = {name: f"{SOURCE}:assertion:{ids[name]}" for name in texts}
    items = {item.market_id: item for item in store.reviews()}
    assert set(items) == set(markets.values())

    # Deciding their outcome leaves their assertion standing: the item closes.
    kept = store.decide_review(items[markets["declined"]].id, "YES", "they were right", "alice")
    assert kept.state == MarketState.SUBMITTED
    assert store.review(items[markets["declined"]].id).status == "closed"
    store.decide_review(items[markets["capped"]].id, "NO", "they were wrong", "alice")
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    refused = store.get_market(markets["capped"])
    assert refused.state == MarketState.FAILED_RETRY
    assert "bond refused (per_request_cap)" in store.audit(markets["capped"])[-1].reason
    assert gauge(metrics, "oracle_bond_refusals_total", venue=SOURCE, reason="per_request_cap") == 1
    assert world.our_transactions() == []

    # The liveness passes before a confirmed dispute goes out: re-read, recorded, not sent.
    store.decide_review(items[markets["late"]].id, "NO", "they were wrong", "alice")
    world.pass_time()
    one_pass(settings)
    for name in ("late", "capped"):
        audit = store.audit(markets[name])
        assert "challenge_moot" in [a.event for a in audit]
        assert any("it can no longer be disputed" in a.reason for a in audit)
    for market_id in markets.values():
        assert store.get_market(market_id).state == MarketState.FINAL
        assert_settled_as(store, market_id, "YES")
    assert [world.disputes_of(i) for i in ids.values()] == [[], [], []]
    assert world.our_transactions() == []
    assert world.reverted() == []
    store.engine.dispose()


def test_a_dispute_sent_before_a_crash_is_recorded_at_the_restart_never_sent_again(
    world: V3World, database_url: str
) -> None:
    wrong = "The observatory's new telescope saw first light in 2019."
    assertion_id = world.assert_as(OTHER_KEY, wrong.encode())
    settings = watch_wrong_claims(world, database_url, wrong)
    one_pass(settings)
    store = open_store(settings)
    market_id = f"{SOURCE}:assertion:{assertion_id}"
    [item] = store.reviews()
    store.decide_review(item.id, "NO", "first light was in 2021", "alice")

    async def dispute_then_crash() -> None:
        # What a daemon leaves when it dies after its dispute was included and before the
        # market moved on: the dispute on-chain and in its intent store, the market
        # still `challenging`.
        assembly = assemble(settings)
        try:
            venue = assembly.daemon.resolvers[SOURCE]
            assert isinstance(venue, UmaV3Venue)
            await venue.start()
            challenged = await venue.challenge(_market_ref(store.get_market(market_id)), "NO")
            assert challenged.sent is not None
        finally:
            await assembly.close()

    asyncio.run(dispute_then_crash())
    assert store.get_market(market_id).state == MarketState.CHALLENGING
    assert world.view(assertion_id).disputer == OURS

    one_pass(settings)

    market = store.get_market(market_id)
    assert market.state == MarketState.DISPUTED
    assert market.submission["challenged"]["result"] == "disputed"
    assert len(world.disputes_of(assertion_id)) == 1
    # The approval and the one dispute; nothing reverted.
    assert len(world.our_transactions()) == 2
    assert world.reverted() == []
    store.engine.dispose()


def test_a_daemon_killed_between_broadcasting_a_dispute_and_its_confirmation_disputes_once(
    world: V3World, tmp_path: Path
) -> None:
    wrong = "The old lighthouse was relit in 2015."
    assertion_id = world.assert_as(OTHER_KEY, wrong.encode())
    settings = watch_wrong_claims(
        world,
        f"sqlite:///{tmp_path / 'oracle.db'}",
        wrong,
        daemon=CRASH_DAEMON,
    )
    one_pass(settings)
    store = open_store(settings)
    market_id = f"{SOURCE}:assertion:{assertion_id}"
    [item] = store.reviews()
    store.decide_review(item.id, "NO", "it stayed dark", "alice")
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    kill_once_broadcast(world.anvil, OURS, config, log, "the dispute", approval=True)
    assert not world.view(assertion_id).disputed  # broadcast, not mined
    restart_until(
        world.anvil,
        config,
        log,
        lambda: store.get_market(market_id).state == MarketState.DISPUTED,
        "the market to be disputed",
    )
    assert len(world.disputes_of(assertion_id)) == 1
    assert world.view(assertion_id).disputer == OURS
    assert len([k for k in _intent_keys(store) if k.startswith(DISPUTE_ASSERTION_PREFIX)]) == 1
    assert world.reverted() == []
    store.engine.dispose()


def test_a_daemon_killed_between_broadcast_and_confirmation_asserts_once(
    world: V3World, tmp_path: Path
) -> None:
    market_ids = [
        world.claim_market(f"crash-{n}", f"Did crash-proof claim {n} land once?", YES_AGREED)
        for n in range(2)
    ]
    world.config(f"sqlite:///{tmp_path / 'oracle.db'}", daemon=CRASH_DAEMON)
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    kill_once_broadcast(world.anvil, OURS, config, log, "the assertion", approval=True)
    assert world.assertions_by(OURS) == []  # broadcast, not mined
    store = open_store(load_settings(config))
    try:
        restart_until(
            world.anvil,
            config,
            log,
            lambda: {store.get_market(m).state for m in market_ids} == {MarketState.SUBMITTED},
            "the markets to be submitted",
        )
    finally:
        store.engine.dispose()
    claims = sorted(a["claim"].decode() for a in world.assertions_by(OURS))
    assert len(claims) == 2
    assert [f"(market {m}) is YES" in c for m, c in zip(market_ids, claims, strict=True)] == [
        True,
        True,
    ]
    calls = [r for r in world.our_transactions() if (r["to"] or "").lower() != OURS.lower()]
    assert len(calls) == 2  # the approval and one multicall asserting both
    assert world.reverted() == []


def test_a_uma_v3_venue_that_cannot_work_stops_the_start_naming_its_setting(
    anvil: Anvil, tmp_path: Path
) -> None:
    def start(source: dict[str, Any]) -> None:
        opinion = {"second_opinion": {"asserters": [OTHER]}}
        start_once(tmp_path, anvil.url, OUR_KEY, {"kind": "uma_v3", **opinion, **source})

    with pytest.raises(
        SetupError, match=r"^market_sources\[uma-v3\]\.oracle_address: no contract at"
    ):
        start({"oracle_address": OTHER})
    # A deployment of UMA without OOv3 (an OOv2-only stack) names the missing contract.
    other = Deployment(chain_id=31337, block_number=0, deployer=OURS, contracts={})
    other.save(tmp_path / "other.json")
    with pytest.raises(
        SetupError,
        match=r"^market_sources\[uma-v3\]\.deployment_file: .*no uma/OptimisticOracleV3 address",
    ):
        start({"deployment_file": str(tmp_path / "other.json")})
