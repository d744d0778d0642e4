"""The daemon on Reality.eth's other contracts and with batched claims, end to end on anvil
(real bytecode from @reality.eth/contracts, replay agents): an Omen-style question on v2.1
(`contract: v2.1`) answered, countered, defended and claimed; a question bonded in an
ERC-20 token (`bond_token`, RealityETH_ERC20_v3_0) with exact approvals; three questions
claimed in one `claimMultipleAndWithdrawBalance` (`claim_batch`); a defence the cap
refuses opening a review item with `counter_answer: never`; a wrong version or token
stopping the start. Books exact to the wei in each."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from oracle.app import open_store
from oracle.chain.erc20 import Erc20
from oracle.config import Settings
from oracle.console.evidence import _stake
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.errors import SetupError, StoreError
from oracle.store.tables import MarketRow
from oracle.testing import consensus_document, result_dict
from oracle.venues.reality.binding import (
    APPROVE_PREFIX,
    CLAIM_MANY_PREFIX,
    CLAIM_PREFIX,
    WITHDRAW_PREFIX,
    QuestionView,
    RealityAnswerer,
    ask_question,
    deploy_reality,
    reality_contract,
)
from oracle.venues.reality.rules import QuestionKind, encode_question_text

from ..anvil import DEV_ADDRESSES, Anvil
from ..chain.helpers import manager_for
from ..chain.test_reality_variants import deploy_token
from .test_reality_e2e import (
    AGREED,
    ASKER_KEY,
    BOUNTY,
    INITIAL,
    NO_WORD,
    OTHER,
    OTHER_KEY,
    OURS,
    TIMEOUT,
    WON_AFTER_DEFENCE,
    YES_WORD,
    RealityWorld,
    assert_settled_as,
)
from .venue_world import gauge, intent_keys, one_pass

ASKER = DEV_ADDRESSES[1]
SUPPLY = 100 * 10**18


class VariantWorld(RealityWorld):
    """`RealityWorld` on another contract: v2.1 (`version`), or v3 bonded in a token minted
    to the asker, us and the other answerer (`erc20`)."""

    version = "v3"
    erc20 = False

    def __init__(self, anvil: Anvil, tmp_path: Path) -> None:
        self.token: str | None = None
        super().__init__(anvil, tmp_path)

    async def _deploy(self) -> tuple[str, str]:
        async with manager_for(self.anvil.url) as deployer:
            if self.erc20:
                self.token = await deploy_token(deployer, [ASKER, OURS, OTHER], SUPPLY)
            reality = await deploy_reality(
                deployer, run="variant", version=self.version, bond_token=self.token
            )
        return reality, deployer.address  # the deployer's account names the arbitrator

    def contract_of(self, manager: Any) -> Any:
        return reality_contract(
            manager.pool, self.reality, version=self.version, bond_token=self.token
        )

    def source(self, **more: Any) -> dict[str, Any]:
        return {"contract": self.version, "bond_token": self.token, **more}

    def ask_select(self, title: str, votes: list[tuple[str, str, float]]) -> str:
        """As Omen asks: single-select Yes / No with a category and a language, opening now,
        with a bounty (in the token on an ERC-20 contract), no minimum bond."""
        latest = self.anvil.rpc("eth_getBlockByNumber", "latest", False)
        text = encode_question_text(
            QuestionKind.SINGLE_SELECT,
            title,
            outcomes=["Yes", "No"],
            category="technology",
            language="en_US",
        )
        self.nonce += 1

        async def run() -> bytes:
            async with manager_for(self.anvil.url, key=ASKER_KEY) as asker:
                return await ask_question(
                    asker,
                    self.reality,
                    template_id=2,
                    text=text,
                    arbitrator=self.arbitrator,
                    timeout=TIMEOUT,
                    nonce=self.nonce,
                    opening_ts=int(latest["timestamp"], 16),
                    bounty=BOUNTY,
                    contract=self.contract_of(asker),
                )

        market_id = "reality:0x" + asyncio.run(run()).hex()
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
            market_id=market_id,
            question=title,
            outcomes=["Yes", "No"],
        )
        (self.replays / f"{market_id.split(':')[1]}.json").write_text(json.dumps(document))
        return market_id

    def _read(self, function: str, market_id: str) -> Any:
        qid = market_id.split(":")[1]

        async def run() -> Any:
            async with manager_for(self.anvil.url) as reader:
                return await getattr(self.contract_of(reader), function)(qid)

        return asyncio.run(run())

    def counter(self, market_id: str, answer: bytes, key: str = OTHER_KEY) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url, key=key) as other:
                answerer = RealityAnswerer(other, self.contract_of(other))
                outcome = await answerer.answer(market_id.split(":")[1], answer)
                assert outcome.answered, outcome.intent.error
                return outcome.bond

        return asyncio.run(run())

    def tokens_of(self, account: str) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                return await Erc20(reader.pool, self.token or "").balance_of(account)

        return asyncio.run(run())

    def allowance(self) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                return await Erc20(reader.pool, self.token or "").allowance(OURS, self.reality)

        return asyncio.run(run())


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> RealityWorld:
    return RealityWorld(anvil, tmp_path)


class V21World(VariantWorld):
    version = "v2.1"


class Erc20World(VariantWorld):
    erc20 = True


def assert_stake_shown(market: MarketRow, settings: Settings, symbol: str) -> None:
    """The venue recorded the bond currency's name with the market (the chain's native
    token, or the bond token's symbol() and decimals()): the console shows our bond (4x
    the first, after the defence) in token units."""
    recorded = (market.details["currency_symbol"], market.details["currency_decimals"])
    assert recorded == (symbol, 18)
    stake = _stake(market, settings.token_table())
    assert stake is not None
    assert stake["token"] == symbol
    assert stake["text"].startswith(f"our bond 0.8 {symbol};")


def _defended_then_final(world: VariantWorld, settings: Any, market_id: str) -> None:
    """We answer Yes at INITIAL, they No at 2x, the policy defends at 4x; the timeout
    passes: final on our Yes."""
    yes, no = (0).to_bytes(32, "big"), (1).to_bytes(32, "big")  # the labels' indexes
    one_pass(settings)
    assert world.history(market_id) == [(OURS, INITIAL, yes)]
    assert world.counter(market_id, no) == 2 * INITIAL
    one_pass(settings)  # superseded: research again
    one_pass(settings)  # defended at double their bond
    assert [(who, bond) for who, bond, _ in world.history(market_id)] == [
        (OURS, INITIAL),
        (OTHER, 2 * INITIAL),
        (OURS, 4 * INITIAL),
    ]
    world.elapse(TIMEOUT + 1)


def test_v2_1_an_omen_question_answered_countered_defended_and_claimed(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = V21World(anvil, tmp_path)
    market_id = world.ask_select("Will the bridge reopen before May?", _labels(AGREED))
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        source=world.source(),
        # Omen's Reality.eth is on Gnosis: bonds in xDAI, as the chain's entry names it.
        chain={"native_token": {"symbol": "xDAI"}},
        defend=True,
        max_per_question_wei=10 * INITIAL,
    )
    before = anvil.balance(OURS)
    _defended_then_final(world, settings, market_id)
    view: QuestionView = world.view(market_id)
    assert view.min_bond == 0  # v2.1 has none
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    store = open_store(settings)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert final.outcomes == ["Yes", "No"]
    assert_stake_shown(final, settings, "xDAI")
    assert_settled_as(store, market_id, "Yes")
    assert world.view(market_id).history_hash == bytes(32)
    assert world.held_for_us() == 0
    # Two answers, claimWinnings and withdraw; v2.1's rule credits what v3's would here.
    assert len(world.our_transactions()) == 4
    assert anvil.balance(OURS) == (
        before - INITIAL - 4 * INITIAL + WON_AFTER_DEFENCE - world.our_gas()
    )
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == WON_AFTER_DEFENCE
    assert world.reverted() == []
    store.engine.dispose()


def test_erc20_a_question_bonded_in_the_token_approves_exactly_and_claims_tokens(
    anvil: Anvil, tmp_path: Path
) -> None:
    world = Erc20World(anvil, tmp_path)
    assert world.token is not None
    market_id = world.ask_select("Will the token list the new pair?", _labels(AGREED))
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        source=world.source(),
        defend=True,
        max_per_question_wei=10 * INITIAL,
    )
    native_before = anvil.balance(OURS)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)
    labels = {"venue": "reality", "token": world.token}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == INITIAL
    assert gauge(metrics, "oracle_bond_balance", **labels) == SUPPLY - INITIAL
    assert gauge(metrics, "oracle_bond_allowance", **labels) == 0
    assert world.tokens_of(OURS) == SUPPLY - INITIAL
    assert world.allowance() == 0  # approved exactly the bond, pulled whole
    _defended_then_final(world, settings, market_id)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    store = open_store(settings)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert final.details["currency"] == world.token
    assert_stake_shown(final, settings, "BOND")
    assert_settled_as(store, market_id, "Yes")
    keys = intent_keys(store)
    approvals = [k for k in keys if k.startswith(APPROVE_PREFIX)]
    assert len(approvals) == 2  # one per answer of ours
    assert [k for k in keys if k.startswith((CLAIM_PREFIX, WITHDRAW_PREFIX))] != []
    assert world.allowance() == 0
    # Tokens: our two bonds out, the claim in; the native token paid only the gas of the
    # two approvals, two answers, the claim and the withdrawal.
    assert world.tokens_of(OURS) == SUPPLY - 5 * INITIAL + WON_AFTER_DEFENCE
    assert world.tokens_of(OTHER) == SUPPLY - 2 * INITIAL
    assert world.tokens_of(ASKER) == SUPPLY - BOUNTY
    assert len(world.our_transactions()) == 6
    assert anvil.balance(OURS) == native_before - world.our_gas()
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == WON_AFTER_DEFENCE
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == 0
    assert gauge(metrics, "oracle_bond_balance", **labels) == world.tokens_of(OURS)
    assert world.reverted() == []
    store.engine.dispose()


def test_questions_final_together_are_claimed_in_one_transaction(
    world: RealityWorld, tmp_path: Path
) -> None:
    markets = [world.ask(f"Did event {n} happen?", AGREED) for n in range(3)]
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}", source={"claim_batch": 8})
    before = world.anvil.balance(OURS)
    one_pass(settings)
    for market_id in markets:
        assert world.history(market_id) == [(OURS, INITIAL, YES_WORD)]
    world.elapse(TIMEOUT + 1)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    store = open_store(settings)
    (claim,) = [k for k in intent_keys(store) if k.startswith(CLAIM_MANY_PREFIX)]
    assert not [k for k in intent_keys(store) if k.startswith((CLAIM_PREFIX, WITHDRAW_PREFIX))]
    last = world.our_transactions()[-1]["transactionHash"]
    for market_id in markets:
        market = store.get_market(market_id)
        assert market.state == MarketState.FINAL
        assert market.submission["settled"] == last  # one transaction settled all three
        assert world.view(market_id).history_hash == bytes(32)
    assert world.held_for_us() == 0
    won = BOUNTY + INITIAL  # each: the bounty and our own bond back
    assert len(world.our_transactions()) == 4  # three answers, one claim
    assert world.anvil.balance(OURS) == before - 3 * INITIAL + 3 * won - world.our_gas()
    labels = {"venue": "reality", "token": "native"}
    assert gauge(metrics, "oracle_bonds_claimed_total", **labels) == 3 * won
    one_pass(settings)
    assert len(world.our_transactions()) == 4
    assert claim
    assert world.reverted() == []
    store.engine.dispose()


def test_a_defence_the_cap_refuses_opens_a_review_item(world: RealityWorld, tmp_path: Path) -> None:
    """`counter_answer: never` (the default) and a defence past the per-question cap: the
    market waits in `disputed` and a review item says why nothing is sent (before, only
    the metrics showed it); it closes when the question settles on their answer."""
    market_id = world.ask("Did the ship dock on time?", AGREED)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", defend=True, max_per_question_wei=3 * INITIAL
    )
    before = world.anvil.balance(OURS)
    one_pass(settings)
    world.counter(market_id, NO_WORD)
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.DISPUTED
    (item,) = store.reviews()
    assert item.market_id == market_id
    text = " ".join(item.reasons)
    assert "answered NO over our YES" in text
    assert "a defence at 800000000000000000 wei is past a cap" in text
    assert "per-question cap 600000000000000000" in text
    assert "Nothing is sent" in text
    assert gauge(metrics, "oracle_venue_disagreements_total", venue="reality") == 1
    market = store.get_market(market_id)
    assert market.submission["their_outcome"] == "NO"
    assert "challenge" not in market.submission  # nothing to confirm: never answers back
    with pytest.raises(StoreError, match="not set to answer back"):
        store.decide_review(item.id, "YES", "we were right", "alice")
    one_pass(settings)
    assert len(store.reviews()) == 1  # opened once
    assert len(world.history(market_id)) == 2  # no defence sent

    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.FINAL
    assert store.reviews() == []
    (closed,) = store.reviews("closed")
    assert closed.id == item.id
    assert len(world.our_transactions()) == 1
    assert world.anvil.balance(OURS) == before - INITIAL - world.our_gas()
    assert world.reverted() == []
    store.engine.dispose()


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ({"contract": "v2.1"}, "not Reality.eth v2.1"),
        ({"bond_token": DEV_ADDRESSES[0]}, "no token()"),
    ],
)
def test_a_contract_not_the_configured_one_stops_the_start(
    world: RealityWorld, tmp_path: Path, source: dict[str, Any], problem: str
) -> None:
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}", source=source)
    with pytest.raises(SetupError, match=r"market_sources\[reality\]\.contract") as raised:
        one_pass(settings)
    assert problem in str(raised.value)


def _labels(votes: list[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """The bool votes as a Yes / No single-select's labels."""
    names = {"YES": "Yes", "NO": "No"}
    return [(agent, names.get(outcome, outcome), conf) for agent, outcome, conf in votes]
