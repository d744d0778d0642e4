"""End to end on UMA's real Optimistic Oracle V2 (compiled from @uma/core) on anvil: a
requester asking as Polymarket's adapter does, the daemon (replay agents) discovering,
researching, proposing through the intent store, settling after liveness; a review verdict
that posts no bond; a risk cap that refuses a bond; another proposer's contradicting
price recorded with a review item; a dispute and the requester's re-ask followed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.chain.contracts import Deployment, encode_call, load_artifact
from oracle.chain.events import EventDecoder
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.config import Settings, load_settings
from oracle.console.evidence import gather
from oracle.core.ancillary import PRICE_SCALE, parse_ancillary
from oracle.core.lifecycle import MarketState
from oracle.core.scoring import DisputeEnd
from oracle.core.text import visible
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.service import _market_ref
from oracle.errors import AncillaryDataError, SetupError, StoreError
from oracle.store.repository import Store
from oracle.store.reviews import Seen
from oracle.testing import consensus_document, result_dict
from oracle.venues.uma.binding import (
    DISPUTE_PREFIX,
    MAX_UINT256,
    OPTIMISTIC_ORACLE_V2,
    PROPOSE_PREFIX,
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    Erc20,
    OptimisticOracleV2,
    RequestKey,
    RequestState,
    UmaProposer,
    identifier_bytes,
)
from oracle.venues.uma.stack import (
    UmaStack,
    ask_like_polymarket,
    deploy_style_requester,
    deploy_uma_stack,
)
from oracle.venues.uma.venue import UmaVenue

from ..anvil import DEV_ADDRESSES, DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from ..commands import oracle_in_process
from .venue_world import (
    CRASH_DAEMON,
    chain_time,
    et_deadline,
    gauge,
    intent_keys,
    kill_once_broadcast,
    one_pass,
    restart_until,
    start_once,
)

LIVENESS = 7200
FINAL_FEE = 5 * 10**18
BOND = 100 * 10**18
REWARD = 2 * 10**18
ASKER_KEY, OUR_KEY, OTHER_KEY = DEV_KEYS[1], DEV_KEYS[2], DEV_KEYS[3]
OURS, OTHER = DEV_ADDRESSES[2], DEV_ADDRESSES[3]
AGENTS = ("alpha", "beta", "gamma")
AGREED = [("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "NO", 0.6)]
CONTESTED = [("alpha", "YES", 0.7), ("beta", "NO", 0.7), ("gamma", "UNDETERMINED", 0.5)]
TOO_SOON = [(agent, "UNDETERMINED", 0.9) for agent in ("alpha", "beta", "gamma")]


def polymarket_question(title: str, deadline: str) -> str:
    """A question as Polymarket asks it, "by `deadline`"."""
    return (
        f'q: title: {title}, description: This market will resolve to "Yes" if it happened '
        f'by {deadline}. Otherwise, this market will resolve to "No". res_data: p1: 0, p2: 1, '
        "p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50."
    )


class UmaWorld:
    def __init__(self, anvil: Anvil, tmp_path: Path) -> None:
        self.anvil = anvil
        self.tmp_path = tmp_path
        self.replays = tmp_path / "replays"
        self.replays.mkdir()
        self.keys: dict[str, RequestKey] = {}  # market id -> its request
        self.stack, self.requester, deployment = asyncio.run(self._deploy())
        self.deployment_file = tmp_path / "uma-deployment.json"
        deployment.save(self.deployment_file)

    async def _deploy(self) -> tuple[UmaStack, str, Deployment]:
        async with manager_for(self.anvil.url) as deployer:
            block = int(self.anvil.rpc("eth_blockNumber"), 16)
            stack = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
            requester = await deploy_style_requester(deployer, stack)
            for account in (requester, OURS, OTHER, DEV_ADDRESSES[0]):
                await call(
                    deployer, TESTNET_ERC20, stack.currency, "allocateTo", account, 20 * BOND
                )
            deployment = Deployment(
                chain_id=deployer.chain_id,
                block_number=block,
                deployer=deployer.address,
                contracts=stack.contracts(),
            )
        return stack, requester, deployment

    def ask(
        self,
        title: str,
        votes: list[tuple[str, str, float]],
        *,
        bond: int = BOND,
        question: str | None = None,
    ) -> str:
        """Ask through the requester (`question`, else `title` as Polymarket asks one
        whose deadline passed two days ago: its outcome final, the daemon may answer at
        once), with the agents' recorded answers; the market id."""
        if question is None:
            deadline, _ = et_deadline(chain_time(self.anvil) - 2 * 86400)
            question = polymarket_question(title, deadline)

        async def run() -> RequestKey:
            async with manager_for(self.anvil.url, key=ASKER_KEY) as asker:
                asked = await ask_like_polymarket(
                    asker, self.requester, question, reward=REWARD, bond=bond
                )
            return RequestKey(
                asked.requester,
                identifier_bytes(YES_OR_NO_QUERY),
                asked.timestamp,
                asked.ancillary_data,
            )

        key = asyncio.run(run())
        text = parse_ancillary(key.ancillary_data).text
        document = consensus_document(
            [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
            market_id=title,
            question=text,
            outcomes=["NO", "YES"],
        )
        (self.replays / f"{key.id_hex}.json").write_text(json.dumps(document))
        self.keys[f"uma:{key.id_hex}"] = key
        return f"uma:{key.id_hex}"

    def config(
        self,
        database_url: str,
        daemon: dict[str, Any] | None = None,
        source: dict[str, Any] | None = None,
        **risk: Any,
    ) -> Settings:
        """The daemon's settings (also written to `config.yaml` in the test's directory)."""
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
                    "kind": "uma",
                    "name": "uma",
                    "deployment_file": str(self.deployment_file),
                    "requesters": [self.requester],
                    "risk": risk,
                    **(source or {}),
                }
            ],
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

    def proposals(self, market_id: str, event: str = "ProposePrice") -> int:
        """How many ProposePrice (or `event`) events the market's request has on the
        canonical chain."""
        decoder = EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V2).abi, event)
        logs = self.anvil.rpc(
            "eth_getLogs",
            {
                "address": self.stack.optimistic_oracle,
                "topics": [decoder.topic],
                "fromBlock": "0x0",
                "toBlock": "latest",
            },
        )
        wanted = self.keys[market_id]
        found = [decoder.decode(log).args for log in logs]
        return sum(
            RequestKey(a["requester"], a["identifier"], a["timestamp"], a["ancillaryData"])
            == wanted
            for a in found
        )

    def view(self, market_id: str) -> Any:
        async def run() -> Any:
            async with manager_for(self.anvil.url) as reader:
                oracle = OptimisticOracleV2(reader.pool, self.stack.optimistic_oracle)
                return await oracle.get_request(self.keys[market_id])

        return asyncio.run(run())

    def balance(self, account: str) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                return await Erc20(reader.pool, self.stack.currency).balance_of(account)

        return asyncio.run(run())

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


async def call(manager: TxManager, name: str, to: str, function: str, *args: Any) -> None:
    intent = await manager.submit(
        TxRequest(
            key=f"{function}:{to}:{len(args)}:{args[0] if args else ''}",
            to=to,
            data=encode_call(name, function, *args),
        )
    )
    assert intent.state == IntentState.CONFIRMED, intent.error


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> UmaWorld:
    return UmaWorld(anvil, tmp_path)


def assert_settled_as(store: Store, market_id: str, outcome: str) -> None:
    """The accuracy ledger holds what UMA settled on, and how it became final."""
    ledger = store.final_outcome(market_id)
    assert ledger is not None
    assert (ledger.outcome, ledger.finality) == (outcome, "uma-settlement")


def test_a_request_is_proposed_on_settled_and_final_a_review_posts_no_bond_a_cap_refuses(
    world: UmaWorld, database_url: str
) -> None:
    agreed = world.ask("Did the launch happen before the deadline?", AGREED)
    contested = world.ask("Who won the local chess final?", CONTESTED)
    costly = world.ask("Did the costly event happen?", AGREED, bond=5 * BOND)
    too_soon = world.ask("Has the future event happened yet?", TOO_SOON)
    settings = world.config(database_url, max_bond_per_request=300, min_bond_balance=2.5)
    before = world.balance(OURS)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    market = store.get_market(agreed)
    assert market.state == MarketState.SUBMITTED
    assert market.outcomes == ["NO", "YES"]
    assert market.details["requester"] == world.requester
    assert market.details["reask_of"] is None
    view = world.view(agreed)
    assert view.state == RequestState.PROPOSED
    assert (view.proposer, view.proposed_price) == (OURS, PRICE_SCALE)
    assert market.submission["reference"] != ""
    assert market.window_ends_at == view.expiration_time
    # One bond posted: the contested question went to a person, the one the agents agree
    # cannot be decided yet waits, the costly one was refused.
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    assert store.get_market(too_soon).state == MarketState.DEFERRED
    assert world.view(too_soon).state == RequestState.REQUESTED
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.view(contested).state == RequestState.REQUESTED
    refused = store.get_market(costly)
    assert refused.state == MarketState.FAILED_RETRY
    assert world.view(costly).state == RequestState.REQUESTED
    assert "bond refused (per_request_cap)" in store.audit(costly)[-1].reason
    assert_bond_gauges(metrics, world, balance=before - BOND - FINAL_FEE)
    # No proposal intent exists for the contested, deferred or refused request.
    uma_keys = [k for k in intent_keys(store) if k.startswith(PROPOSE_PREFIX)]
    assert len(uma_keys) == 1
    assert uma_keys[0].endswith(world.keys[agreed].id_hex)

    world.pass_time()
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    final = store.get_market(agreed)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, agreed, "YES")
    view = world.view(agreed)
    assert view.state == RequestState.SETTLED
    assert view.resolved_price == PRICE_SCALE
    assert world.balance(OURS) == before + REWARD  # bond and fee back, and the reward
    labels = {"venue": "uma", "token": world.stack.currency}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == 0
    assert store.get_market(contested).state == MarketState.NEEDS_REVIEW
    assert world.view(contested).state == RequestState.REQUESTED
    # approve (exactly the bond), one proposal, one settle; nothing reverted.
    assert len(world.our_transactions()) == 3
    assert world.reverted() == []
    store.engine.dispose()


def assert_bond_gauges(metrics: DaemonMetrics, world: UmaWorld, *, balance: int) -> None:
    """One bond posted, one refused by the per-request cap."""
    labels = {"venue": "uma", "token": world.stack.currency}
    assert gauge(metrics, "oracle_bond_refusals_total", venue="uma", reason="per_request_cap") == 1
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == BOND + FINAL_FEE
    # Exactly the bond was approved, and the proposal took it: never an unlimited allowance.
    assert gauge(metrics, "oracle_bond_allowance", **labels) == 0
    assert gauge(metrics, "oracle_bond_balance", **labels) == balance
    # risk.min_bond_balance (2.5 units) in the currency's smallest unit, for the alert.
    assert gauge(metrics, "oracle_bond_min_balance", **labels) == 25 * 10**17


def assert_shown_in_token_units(
    world: UmaWorld, details: dict[str, Any], item_id: int, stake: dict[str, Any]
) -> None:
    """The venue recorded the currency's name (its symbol() and decimals()): the console
    and `oracle review show` say what is at stake in token units, not the smallest unit."""
    assert (details["currency_symbol"], details["currency_decimals"]) == ("BOND", 18)
    assert stake["text"] == "bond 100 BOND + final fee 5 BOND, reward 2 BOND"
    assert stake["token"] == "BOND"
    config = str(world.tmp_path / "config.yaml")
    shown = oracle_in_process("review", "show", str(item_id), "--config", config)
    assert shown.returncode == 0, shown.stderr
    assert "at stake: bond 100 BOND + final fee 5 BOND, reward 2 BOND" in shown.stdout


def test_another_proposers_contradicting_price_is_recorded_and_opens_a_review_item(
    world: UmaWorld, database_url: str
) -> None:
    market_id = world.ask("Did the other proposer get it right?", AGREED)

    async def propose_no() -> None:
        async with manager_for(world.anvil.url, key=OTHER_KEY) as other:
            oracle = OptimisticOracleV2(other.pool, world.stack.optimistic_oracle)
            proposal = await UmaProposer(other, oracle).propose(world.keys[market_id], 0)
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.CONFIRMED

    asyncio.run(propose_no())
    settings = world.config(database_url)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    assert [m.id for m in store.markets()] == [market_id]
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    assert market.decided_outcome == "YES"
    submission = market.submission
    assert submission["proposed_by_other"] is True
    assert (submission["their_outcome"], submission["our_outcome"]) == ("NO", "YES")
    assert submission["agrees"] is False
    assert submission["proposer"] == OTHER
    [item] = store.reviews()
    assert item.market_id == market_id
    assert "proposed NO (price 0)" in item.reasons[0]
    assert "our verdict is YES" in item.reasons[0]
    # The reviewer sees what is at stake and how long their answer can still be disputed.
    shown = gather(store, item.id, now=market.window_ends_at - 600)["review"]
    stake = shown["stake"]
    assert {k: stake[k] for k in ("bond", "final_fee", "reward", "currency")} == {
        "bond": str(BOND),
        "final_fee": str(FINAL_FEE),
        "reward": str(REWARD),
        "currency": world.stack.currency,
    }
    assert_shown_in_token_units(world, market.details, item.id, stake)
    assert shown["window_left_seconds"] == 600
    assert gauge(metrics, "oracle_venue_disagreements_total", venue="uma") == 1
    assert world.our_transactions() == []  # no approve, no proposal: nothing to revert

    # Their price stands undisputed: the market is final with their outcome beside ours.
    world.pass_time()
    one_pass(settings)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert_settled_as(store, market_id, "NO")
    # The accuracy ledger scores it: their answer stood, our verdict was overturned.
    [rival] = [d for d in store.disagreements() if d.market_id == market_id]
    assert (rival.ours, rival.theirs, rival.ended) == ("YES", "NO", DisputeEnd.OVERTURNED)
    # The disagreement can change nothing now: its item is closed, saying how it ended.
    assert store.reviews() == []
    [closed] = store.reviews("closed")
    assert (closed.id, closed.decided_reason) == (item.id, "the venue settled on NO")
    # Settling pays their bond back: left to them, for their gas.
    assert world.view(market_id).state == RequestState.EXPIRED
    assert world.our_transactions() == []
    assert world.reverted() == []
    store.engine.dispose()


# Read two ways: "No. Then, p2 to Yes" may name p2 after the sentence ended. A right-to-left
# override hides in the description: the reviewer sees it escaped.
UNREADABLE = (
    "q: title: Who wins tonight?, description: Cardinals\u202e vs Red Sox. res_data: p1: 0, "
    "p2: 1, p3: 0.5. Where p1 corresponds to No. Then, p2 to Yes, p3 to unknown/50-50."
)


def ask_unreadable(world: UmaWorld) -> RequestKey:
    """Ask `UNREADABLE` as Polymarket's adapter asks; its request."""

    async def ask() -> RequestKey:
        async with manager_for(world.anvil.url, key=ASKER_KEY) as asker:
            asked = await ask_like_polymarket(
                asker, world.requester, UNREADABLE, reward=REWARD, bond=BOND
            )
        return RequestKey(
            asked.requester,
            identifier_bytes(YES_OR_NO_QUERY),
            asked.timestamp,
            asked.ancillary_data,
        )

    key = asyncio.run(ask())
    world.keys[f"uma:{key.id_hex}"] = key
    return key


def test_a_request_that_cannot_be_read_goes_to_a_person_with_its_raw_text_and_nothing_is_sent(
    world: UmaWorld, database_url: str, tmp_path: Path
) -> None:
    key = ask_unreadable(world)
    market_id = f"uma:{key.id_hex}"
    with pytest.raises(AncillaryDataError, match="res_data p2: named at offset"):
        parse_ancillary(key.ancillary_data)
    settings = world.config(database_url)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    # A market that went straight to a person: no outcome, never researched.
    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.NEEDS_REVIEW
    assert (market.outcomes, market.attempts) == ([], 0)
    assert market.details["ancillary_data"] == "0x" + key.ancillary_data.hex()
    raw = key.ancillary_data.decode()
    assert "\u202e" in raw
    assert raw.endswith(",initializer:" + DEV_ADDRESSES[1][2:].lower())
    escaped = visible(raw)  # the override shown as `\u202e`, never acted on
    assert "\\u202e" in escaped
    assert "\u202e" not in escaped
    assert market.details["unreadable"]["ancillary_text"] == escaped
    [item] = store.reviews()
    assert item.market_id == market_id
    [reason] = item.reasons
    assert reason.startswith("unreadable: ancillary data: res_data p2: named at offset ")
    assert reason.endswith(
        "after the sentence naming the prices ended (at offset 124, after `No`): ambiguous"
    )
    assert gauge(metrics, "oracle_review_reasons_total", reason="unreadable") == 1
    assert not gauge(metrics, "oracle_source_errors_total", source="uma", kind="malformed")

    # `oracle review list` shows it: the raw text, escaped, and why it was refused.
    listed = oracle_in_process(
        "review", "list", "--json", "--config", str(tmp_path / "config.yaml")
    )
    assert listed.returncode == 0, listed.stderr
    [shown] = json.loads(listed.stdout)["reviews"]
    assert (shown["id"], shown["market_id"], shown["status"]) == (item.id, market_id, "open")
    assert shown["question"] == escaped
    assert shown["reasons"] == [reason]
    evidence = gather(store, item.id)  # what `review show` and the console show
    assert evidence["market"]["question"] == escaped
    assert evidence["market"]["details"]["unreadable"]["error"] == reason.removeprefix(
        "unreadable: "
    )
    text = oracle_in_process("review", "list", "--config", str(tmp_path / "config.yaml")).stdout
    assert "\u202e" not in text
    assert "named at offset" in text

    # No decision and no research can make the daemon send anything for it.
    with pytest.raises(StoreError, match=r"a decision refused: .* cannot be read exactly"):
        store.decide_review(item.id, "INVALID", "looked at it", "alice")
    with pytest.raises(StoreError, match="sending back refused"):
        store.send_back_for_research(item.id, "alice", "try again")
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    assert [i.id for i in store.reviews()] == [item.id]
    assert world.view(market_id).state == RequestState.REQUESTED
    assert intent_keys(store) == []
    assert world.our_transactions() == []  # no approve, no proposal, no bond
    store.engine.dispose()


def test_an_unreadable_request_answered_by_another_closes_its_item(
    world: UmaWorld, database_url: str
) -> None:
    """Another proposer answers it on the venue: the item closes, saying so (it would
    otherwise wait for a person for ever, with nothing a person could do here)."""
    key = ask_unreadable(world)
    market_id = f"uma:{key.id_hex}"
    settings = world.config(database_url)
    one_pass(settings)
    store = open_store(settings)
    [item] = store.reviews()
    propose_as_other(world, market_id, PRICE_SCALE)
    one_pass(settings)
    assert store.reviews() == []
    [closed] = store.reviews(status="closed")
    assert closed.id == item.id
    assert closed.decided_by  # the replica that saw the other's proposal
    assert "another party answered it on the venue" in (closed.decided_reason or "")
    assert world.our_transactions() == []
    store.engine.dispose()


def propose_as_other(world: UmaWorld, market_id: str, price: int) -> None:
    async def run() -> None:
        async with manager_for(world.anvil.url, key=OTHER_KEY) as other:
            oracle = OptimisticOracleV2(other.pool, world.stack.optimistic_oracle)
            proposal = await UmaProposer(other, oracle).propose(world.keys[market_id], price)
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.CONFIRMED

    asyncio.run(run())


def test_a_person_confirming_a_disagreement_makes_the_daemon_dispute_once(
    world: UmaWorld, database_url: str
) -> None:
    market_id = world.ask("Did the other proposer get it wrong?", AGREED)
    propose_as_other(world, market_id, 0)  # NO; our agents agree on YES
    settings = world.config(database_url, source={"dispute": "after_review"})
    one_pass(settings)

    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["challenge"] == "dispute"
    [item] = store.reviews()
    # Both answers, and what deciding does, are shown to the person.
    assert "proposed NO (price 0)" in item.reasons[0]
    assert "our verdict is YES" in item.reasons[0]
    assert "deciding YES (or another outcome than theirs) confirms a dispute" in item.reasons[1]
    assert gather(store, item.id)["review"]["challenge"] == {
        "action": "dispute",
        "confirms": "a dispute against their answer",
        "their_outcome": "NO",
        "their_account": OTHER,
        "our_outcome": "YES",
        "pending": None,
        "done": None,
    }
    assert world.our_transactions() == []  # nothing is sent before a person confirms
    # Another pass without a decision sends nothing either.
    one_pass(settings)
    assert world.our_transactions() == []
    assert world.view(market_id).state == RequestState.PROPOSED

    latest = store.latest_consensus(market_id)
    assert latest is not None
    confirmed = store.decide_review(
        item.id, "YES", "the launch happened", "alice", seen=Seen(latest.id, latest.checksum)
    )
    assert confirmed.state == MarketState.CHALLENGING
    before = world.balance(OURS)
    world.anvil.rpc("evm_increaseTime", 10)  # the re-ask's timestamp, as above
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    view = world.view(market_id)
    assert (view.state, view.disputer, view.proposer) == (RequestState.DISPUTED, OURS, OTHER)
    disputed = store.get_market(market_id)
    assert disputed.state == MarketState.DISPUTED
    assert disputed.submission["challenged"]["result"] == "disputed"
    assert disputed.submission["challenged"]["by"] == "alice"
    assert "challenge_pending" not in disputed.submission
    # The dispute's bond + final fee, in the request's currency, once.
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    assert gauge(metrics, "oracle_challenges_total", venue="uma", result="disputed") == 1
    labels = {"venue": "uma", "token": world.stack.currency}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == BOND + FINAL_FEE
    events = [a.event for a in store.audit(market_id)]
    assert events[-2:] == ["challenge_confirmed", "challenge_disputed"]
    assert [i.status for i in store.reviews(None)] == ["decided"]

    # Passes after it (the requester's re-ask is proposed on) never dispute again.
    one_pass(settings)
    one_pass(settings)
    assert world.proposals(market_id, "DisputePrice") == 1
    dispute_keys = [k for k in intent_keys(store) if k.startswith(DISPUTE_PREFIX)]
    assert len(dispute_keys) == 1
    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert world.reverted() == []
    store.engine.dispose()


def test_a_dispute_sent_before_a_crash_is_recorded_at_the_restart_never_sent_again(
    world: UmaWorld, database_url: str
) -> None:
    market_id = world.ask("Was the dispute sent before the crash?", AGREED)
    propose_as_other(world, market_id, 0)
    settings = world.config(database_url, source={"dispute": "after_review"})
    one_pass(settings)
    store = open_store(settings)
    [item] = store.reviews()
    store.decide_review(item.id, "YES", "they are wrong", "alice")

    async def dispute_then_crash() -> None:
        # What a daemon leaves when it dies after its dispute was included and before the
        # market moved on: the dispute on-chain and in its intent store, the market
        # still `challenging`.
        assembly = assemble(settings)
        try:
            venue = assembly.daemon.resolvers["uma"]
            assert isinstance(venue, UmaVenue)
            await venue.start()
            challenged = await venue.challenge(_market_ref(store.get_market(market_id)), "YES")
            assert challenged.sent is not None
        finally:
            await assembly.close()

    # Blocks can share a second on anvil: the requester's re-ask needs a timestamp of its own.
    world.anvil.rpc("evm_increaseTime", 10)
    asyncio.run(dispute_then_crash())
    assert store.get_market(market_id).state == MarketState.CHALLENGING
    assert world.view(market_id).disputer == OURS

    one_pass(settings)

    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert world.proposals(market_id, "DisputePrice") == 1
    # The one dispute and our proposal on the requester's re-ask, each after an approval of
    # exactly its bond; nothing reverted.
    assert len(world.our_transactions()) == 4
    [reask] = [m for m in store.markets() if m.details.get("reask_of") == market_id]
    assert (reask.state, reask.submission["proposer"]) == (MarketState.SUBMITTED, OURS)
    assert world.reverted() == []
    store.engine.dispose()


def test_a_person_declining_sends_nothing_and_a_late_confirmation_is_recorded_not_sent(
    world: UmaWorld, database_url: str
) -> None:
    declined = world.ask("Was the other proposer right after all?", AGREED)
    late = world.ask("Was the confirmation too late?", AGREED)
    capped = world.ask("Was the dispute too costly?", AGREED, bond=5 * BOND)
    for market_id in (declined, late, capped):
        propose_as_other(world, market_id, 0)
    settings = world.config(
        database_url, source={"dispute": "after_review"}, max_bond_per_request=300
    )
    one_pass(settings)
    store = open_store(settings)
    items = {item.market_id: item for item in store.reviews()}
    assert set(items) == {declined, late, capped}

    # Deciding their outcome leaves their answer standing: the item closes, no transition.
    kept = store.decide_review(items[declined].id, "NO", "they were right", "alice")
    assert kept.state == MarketState.SUBMITTED
    assert store.review(items[declined].id).status == "closed"
    store.decide_review(items[capped].id, "YES", "they were wrong", "alice")
    assert store.get_market(capped).state == MarketState.CHALLENGING
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    # The cap refuses the costly dispute (metric, audit), and it waits to be retried.
    refused = store.get_market(capped)
    assert refused.state == MarketState.FAILED_RETRY
    assert "bond refused (per_request_cap)" in store.audit(capped)[-1].reason
    assert gauge(metrics, "oracle_bond_refusals_total", venue="uma", reason="per_request_cap") == 1
    assert world.view(capped).state == RequestState.PROPOSED
    assert world.our_transactions() == []

    # The liveness passes before a confirmed dispute goes out: re-read, recorded, not sent.
    store.decide_review(items[late].id, "YES", "they were wrong", "alice")
    store.engine.dispose()
    world.pass_time()
    one_pass(settings)
    store = open_store(settings)
    for market_id in (late, capped):
        audit = store.audit(market_id)
        assert "challenge_moot" in [a.event for a in audit]
        assert any("can no longer be disputed" in a.reason for a in audit)
    for market_id in (declined, late, capped):
        assert store.get_market(market_id).state == MarketState.FINAL
        assert_settled_as(store, market_id, "NO")
    assert world.our_transactions() == []
    assert world.reverted() == []
    store.engine.dispose()


def test_a_dispute_moves_the_market_to_disputed_and_the_reask_is_followed(
    world: UmaWorld, database_url: str
) -> None:
    first = world.ask("Will the disputed question be asked again?", AGREED)
    settings = world.config(database_url)
    one_pass(settings)
    store = open_store(settings)
    assert store.get_market(first).state == MarketState.SUBMITTED

    async def dispute() -> str:
        async with manager_for(world.anvil.url, key=DEV_KEYS[0]) as disputer:
            oo = world.stack.optimistic_oracle
            await call(disputer, TESTNET_ERC20, world.stack.currency, "approve", oo, MAX_UINT256)
            await call(disputer, OPTIMISTIC_ORACLE_V2, oo, "disputePrice", *world.keys[first].args)
            block = await disputer.pool.call(
                "eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest")
            )
            return str(int(block["timestamp"]))

    # Blocks can share a second on anvil: the re-ask needs a timestamp of its own.
    world.anvil.rpc("evm_increaseTime", 10)
    reasked_at = int(asyncio.run(dispute()))
    assert world.view(first).state == RequestState.DISPUTED
    # The requester asked again from its dispute callback: same data, new timestamp.
    first_key = world.keys[first]
    reask = RequestKey(
        first_key.requester, first_key.identifier, reasked_at, first_key.ancillary_data
    )
    reask_id = f"uma:{reask.id_hex}"
    world.keys[reask_id] = reask
    world.pass_time()  # the first proposal's window is over: the watch looks at it

    one_pass(settings)

    assert store.get_market(first).state == MarketState.DISPUTED
    followed = store.get_market(reask_id)
    assert followed.details["reask_of"] == first
    assert followed.details["question_key"] == store.get_market(first).details["question_key"]
    assert followed.details["disputed_proposal"] == {
        "proposer": OURS,
        "disputer": DEV_ADDRESSES[0],
        "ours": True,
    }
    # Someone put a bond against our answer: a person decides before another is posted.
    assert followed.state == MarketState.NEEDS_REVIEW
    assert world.view(reask_id).state == RequestState.REQUESTED
    [item] = store.reviews()
    assert item.market_id == reask_id
    assert "our proposal on the request it re-asks was disputed by" in item.reasons[-1]
    store.decide_review(item.id, "YES", "checked the disputer's evidence: still yes", "alice")
    one_pass(settings)
    assert store.get_market(reask_id).state == MarketState.SUBMITTED
    view = world.view(reask_id)
    assert (view.state, view.proposer, view.proposed_price) == (
        RequestState.PROPOSED,
        OURS,
        PRICE_SCALE,
    )

    world.pass_time()
    one_pass(settings)
    assert store.get_market(reask_id).state == MarketState.FINAL
    assert world.view(reask_id).state == RequestState.SETTLED
    assert store.get_market(first).state == MarketState.DISPUTED  # the vote has not spoken
    assert world.reverted() == []
    store.engine.dispose()


def test_a_dispute_inside_the_window_is_seen_by_the_next_watch_pass(
    world: UmaWorld, database_url: str
) -> None:
    """Two answers disputed at once, an hour and more before their windows end: the next
    pass moves both to `disputed` (the alert's attention series shows them), no clock
    warped past the window; a third, undisputed, stays `submitted`."""
    disputed = [world.ask(f"Will dispute {n} be seen at once?", AGREED) for n in (1, 2)]
    quiet = world.ask("Will the undisputed answer wait for its window?", AGREED)
    settings = world.config(database_url)
    one_pass(settings)
    store = open_store(settings)
    assert {store.get_market(m).state for m in (*disputed, quiet)} == {MarketState.SUBMITTED}

    async def dispute() -> int:
        async with manager_for(world.anvil.url, key=DEV_KEYS[0]) as disputer:
            oo = world.stack.optimistic_oracle
            await call(disputer, TESTNET_ERC20, world.stack.currency, "approve", oo, MAX_UINT256)
            for market_id in disputed:
                # Each re-ask needs a timestamp of its own (blocks can share a second),
                # and so does the gas estimate, which runs on the latest block: a block
                # is mined past the ask's time first.
                world.anvil.rpc("evm_increaseTime", 2)
                world.anvil.mine()
                key = world.keys[market_id]
                intent = await disputer.submit(
                    TxRequest(
                        key=f"dispute:{key.id_hex}",
                        to=oo,
                        data=encode_call(OPTIMISTIC_ORACLE_V2, "disputePrice", *key.args),
                    )
                )
                assert intent.state == IntentState.CONFIRMED, intent.error
            block = await disputer.pool.call(
                "eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest")
            )
            return int(block["timestamp"])

    now = asyncio.run(dispute())
    assert [world.view(m).state for m in disputed] == [RequestState.DISPUTED] * 2
    windows_end = min(store.get_market(m).window_ends_at or 0 for m in (*disputed, quiet))
    assert windows_end - now > 3600  # well inside the window

    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    for market_id in disputed:
        market = store.get_market(market_id)
        assert market.state == MarketState.DISPUTED
        assert [a.event for a in store.audit(market_id)][-1] == "disputed"
    assert store.get_market(quiet).state == MarketState.SUBMITTED
    shown = [
        sample.labels["market"]
        for family in metrics.registry.collect()
        if family.name == "oracle_market_attention_timestamp_seconds"
        for sample in family.samples
        if sample.labels["reason"] == "disputed"
    ]
    assert sorted(shown) == sorted(disputed)
    store.engine.dispose()


def test_a_uma_venue_that_cannot_work_stops_the_start_naming_its_setting(
    anvil: Anvil, tmp_path: Path
) -> None:
    def start(source: dict[str, Any]) -> None:
        start_once(tmp_path, anvil.url, OUR_KEY, {"kind": "uma", **source})

    with pytest.raises(SetupError, match=r"^market_sources\[uma\]\.oracle_address: no contract at"):
        start({"oracle_address": OTHER})
    other = Deployment(chain_id=31337, block_number=0, deployer=OURS, contracts={})
    other.save(tmp_path / "other.json")
    with pytest.raises(
        SetupError,
        match=r"^market_sources\[uma\]\.deployment_file: .*no uma/OptimisticOracleV2 address",
    ):
        start({"deployment_file": str(tmp_path / "other.json")})


def test_a_daemon_killed_between_broadcast_and_confirmation_proposes_once(
    world: UmaWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the crash-proof proposal land once?", AGREED)
    world.config(f"sqlite:///{tmp_path / 'oracle.db'}", daemon=CRASH_DAEMON)
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    kill_once_broadcast(world.anvil, OURS, config, log, "the proposal", approval=True)
    assert world.view(market_id).state == RequestState.REQUESTED  # broadcast, not mined
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
    assert world.proposals(market_id) == 1
    view = world.view(market_id)
    assert (view.proposer, view.proposed_price) == (OURS, PRICE_SCALE)
    calls = [r for r in world.our_transactions() if (r["to"] or "").lower() != OURS.lower()]
    assert len(calls) == 2  # the approval and one proposal
    assert world.reverted() == []


def test_a_daemon_killed_between_broadcasting_a_dispute_and_its_confirmation_disputes_once(
    world: UmaWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the crash-proof dispute land once?", AGREED)
    propose_as_other(world, market_id, 0)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        daemon=CRASH_DAEMON,
        source={"dispute": "after_review"},
    )
    one_pass(settings)
    store = open_store(settings)
    [item] = store.reviews()
    store.decide_review(item.id, "YES", "they are wrong", "alice")
    config, log = tmp_path / "config.yaml", tmp_path / "daemon.log"
    world.anvil.rpc("evm_increaseTime", 10)  # the re-ask needs a timestamp of its own
    kill_once_broadcast(world.anvil, OURS, config, log, "the dispute", approval=True)
    assert world.view(market_id).state == RequestState.PROPOSED  # broadcast, not mined
    restart_until(
        world.anvil,
        config,
        log,
        lambda: store.get_market(market_id).state == MarketState.DISPUTED,
        "the market to be disputed",
    )
    assert world.proposals(market_id, "DisputePrice") == 1
    assert world.view(market_id).disputer == OURS
    assert len([k for k in intent_keys(store) if k.startswith(DISPUTE_PREFIX)]) == 1
    assert world.reverted() == []
    store.engine.dispose()


def test_three_bonds_of_105_under_an_outstanding_cap_of_150_post_one_and_refuse_two(
    world: UmaWorld, database_url: str
) -> None:
    """Issue 22: three requests each needing bond + final fee of 105, delivered at the
    default concurrency, `max_bond_outstanding: 150`: one proposal, two refusals."""
    markets = [world.ask(f"Did event number {n} happen?", AGREED) for n in range(3)]
    settings = world.config(database_url, max_bond_outstanding=150)
    before = world.balance(OURS)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    proposed = [m for m in markets if world.view(m).state == RequestState.PROPOSED]
    assert len(proposed) == 1
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    refused = [m for m in markets if m not in proposed]
    for market_id in refused:
        assert store.get_market(market_id).state == MarketState.FAILED_RETRY
        assert "bond refused (outstanding_cap)" in store.audit(market_id)[-1].reason
    counted = gauge(metrics, "oracle_bond_refusals_total", venue="uma", reason="outstanding_cap")
    assert counted == 2
    labels = {"venue": "uma", "token": world.stack.currency}
    assert gauge(metrics, "oracle_bonds_at_risk", **labels) == BOND + FINAL_FEE
    # A second pass refuses them again: the bond on chain still counts.
    one_pass(settings, metrics)
    assert [m for m in markets if world.view(m).state == RequestState.PROPOSED] == proposed
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    store.engine.dispose()
