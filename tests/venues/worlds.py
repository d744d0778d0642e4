"""One small world per venue kind, each with the same interface, for the contract suite
(`test_venue_contract.py`): ask a question the venue delivers, a hostile one, answer as
someone else, end the challenge window, count what reached the venue.

Each adapter wraps the world its kind's end-to-end tests already build on anvil
(`tests/daemon/...`), and every venue is made by the composition root (`assemble`) from
the settings those worlds write, as `oracle run` makes it. The venue classes and their
wiring are named in this module only.
"""

from __future__ import annotations

import asyncio
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

import yaml

from oracle.app import assemble
from oracle.chain.contracts import ORACLE, AgentOracle, encode_call
from oracle.chain.deploy import DEFAULT_BOND_WEI, ask
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxRequest
from oracle.config import Settings, load_settings
from oracle.daemon.chain_parts import CLOCK_FRESH
from oracle.daemon.ports import (
    AnsweredByOthers,
    Challenger,
    Funded,
    InvalidAnswers,
    MarketSource,
    Monitored,
    Refreshing,
    Resolver,
    VenueClock,
    VenueReview,
)
from oracle.venues.http.venue import HttpMarketSource, WebhookResolver
from oracle.venues.own.submitter import ProposalSubmitter
from oracle.venues.own.venue import ChainVenue
from oracle.venues.reality.binding import ask_question
from oracle.venues.reality.rules import QuestionKind, encode_question_text
from oracle.venues.reality.venue import RealityVenue
from oracle.venues.uma.venue import UmaVenue
from oracle.venues.uma.venue_v3 import UmaV3Venue

from ..anvil import DEV_ADDRESSES, Anvil
from ..chain.helpers import answer, manager_for
from ..daemon import test_reality_e2e as reality_e2e
from ..daemon import test_uma_e2e as uma_e2e
from ..daemon import test_uma_v3_e2e as uma_v3_e2e
from ..daemon.chain_world import (
    REPORTER_SLOTS,
    REQUESTER_KEY,
    World,
    build_world,
    daemon_config,
)
from ..daemon.test_pipeline import Venue as HttpVenueServer
from ..daemon.test_pipeline import serve, settings_for
from ..daemon.test_startup import fake_deployment
from ..daemon.venue_world import chain_time, warp_to

# Every optional port a venue kind may implement; each world names the ones its kind does.
OPTIONAL_PORTS: tuple[type, ...] = (
    AnsweredByOthers,
    Challenger,
    Funded,
    InvalidAnswers,
    Monitored,
    Refreshing,
    VenueClock,
    VenueReview,
)
# The chain every world's anvil serves, and one no node of it does.
ANVIL_CHAIN_ID = 31337
OTHER_CHAIN_ID = 5
# Numbers the questions asked in a module, so that no two are the same question.
_numbers = count()


@dataclass
class Venue:
    """A venue kind's market source and resolver as the daemon holds them (one object
    for a chain kind), and how to let go of everything `assemble` made for them."""

    source: MarketSource
    resolver: Resolver
    close: Callable[[], Awaitable[None]]

    def objects(self) -> list[Any]:
        return list({id(x): x for x in (self.source, self.resolver)}.values())

    async def start(self) -> None:
        for venue in self.objects():
            await venue.start()

    async def aclose(self) -> None:
        for venue in self.objects():
            await venue.aclose()


def open_venue(settings: Settings) -> Venue:
    """The venue of the settings' one market source, made as `oracle run` makes it."""
    assembly = assemble(settings)
    [source] = assembly.daemon.sources
    return Venue(source, assembly.daemon.resolvers[source.name], assembly.close)


@dataclass(frozen=True)
class Hostile:
    """A market whose question is hostile bytes: its id, and, when the kind skips it,
    what the poll's line about it says (None: the kind delivers it, for a person or as
    text shown escaped)."""

    market_id: str
    line: str | None


class VenueWorld(ABC):
    """What the contract suite asks of every venue kind's world."""

    kind: str
    # The classes the composition root makes for the kind (source, resolver).
    classes: tuple[type, type]
    # The optional ports the kind implements (a regression in them fails the suite).
    ports: frozenset[type]
    # Whether the venue is a contract on the chain (else an off-chain venue).
    on_chain: bool = True
    # Whether an answer waits out a challenge window before it is final.
    windowed: bool = True

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @abstractmethod
    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        """The daemon's settings over this world's venue; `chain_id` the one expected
        of the node (`chain.rpc.chain_id`)."""

    @abstractmethod
    def ask_answerable_question(self) -> str:
        """Ask a question the venue can answer now (YES or NO); its market id."""

    @abstractmethod
    def ask_hostile_question(self) -> Hostile: ...

    @abstractmethod
    def answers_on_venue(self, market_id: str) -> int:
        """How many answers of ours the venue holds for the market."""

    @abstractmethod
    def sent_by_us(self) -> int:
        """How much our signer (the webhook's caller) has sent, ever."""

    def end_window(self) -> None:  # noqa: B027 (a kind without a window waits for nothing)
        """Let the challenge window of every answer pass."""

    def answer_on_venue_as_someone_else(self, market_id: str) -> None:
        """Another party acts on the market on the venue (answers NO, or disputes)."""
        raise NotImplementedError(f"{self.kind}: nobody else answers on this venue")

    def venue_time(self) -> float | None:
        """The time on the venue's clock (for a chain: its latest block's)."""
        return None

    def close(self) -> None:  # noqa: B027 (most worlds run nothing besides anvil)
        """Stop what the world runs besides anvil."""

    def _edited(self, path: Path, change: Callable[[dict[str, Any]], None]) -> Settings:
        """The settings of the config file at `path` after `change`, as a new file."""
        config = yaml.safe_load(path.read_text())
        change(config)
        edited = path.with_name(f"edited-{path.name}")
        edited.write_text(yaml.safe_dump(config))
        return load_settings(edited)

    def _with_chain_id(self, path: Path, chain_id: int | None, **source: Any) -> Settings:
        """The settings at `path` expecting `chain_id` of the node, with `source`'s keys
        set in the market source's entry."""

        def change(config: dict[str, Any]) -> None:
            if chain_id is not None:
                config["chain"]["rpc"]["chain_id"] = chain_id
            config["market_sources"][0].update(source)

        return self._edited(path, change)

    def unusable_settings(self, database_url: str) -> tuple[Settings, str]:
        """Settings whose venue cannot work (its contract is not where they say), and the
        setting a SetupError must name."""
        raise NotImplementedError(f"{self.kind}: nothing to check before the first request")

    def _source_at(self, database_url: str, key: str, address: str) -> tuple[Settings, str]:
        """This world's settings with the source's contract at `address` (`key`)."""
        self.settings(database_url)

        def change(config: dict[str, Any]) -> None:
            source = config["market_sources"][0]
            source.pop("deployment_file", None)
            source[key] = address

        settings = self._edited(self.directory / "config.yaml", change)
        return settings, f"market_sources[{settings.market_sources[0].name}].{key}"

    def ask_question_answered_by_someone_else(self) -> tuple[str, str]:
        """A market on which another party's answer stands; (its id, their outcome)."""
        raise NotImplementedError(f"{self.kind}: nobody else answers on this venue")

    def challenges_on_venue(self, market_id: str) -> int:
        """How many challenges (disputes, counter-answers) of ours the market has."""
        raise NotImplementedError(f"{self.kind}: nothing is challenged on this venue")

    def _let_time_pass(self, warp: Callable[[], None]) -> None:
        """`warp` the chain's time, then wait until a venue's clock reads it again (it
        reuses a read for `CLOCK_FRESH` seconds)."""
        warp()
        time.sleep(CLOCK_FRESH)


def _nonce(anvil: Anvil, account: str) -> int:
    return int(anvil.rpc("eth_getTransactionCount", account, "latest"), 16)


class ChainWorld(VenueWorld):
    """Our own oracle contract (`tests/daemon/chain_world.py`), liveness 60 s."""

    kind = "chain"
    classes = (ChainVenue, ChainVenue)
    ports = frozenset({AnsweredByOthers, Funded, Monitored, VenueClock})

    def __init__(self, anvil: Anvil, directory: Path) -> None:
        super().__init__(directory)
        self.anvil = anvil
        self.world: World = build_world(anvil, directory, 0)
        self.reporter = DEV_ADDRESSES[REPORTER_SLOTS[0]]

    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        path = daemon_config(self.world, self.directory, database_url)

        def change(config: dict[str, Any]) -> None:
            # A batch of one proposal waits a tenth of a second, not half of one.
            config["chain"]["submitter"]["batch_max_wait"] = 0.1
            if chain_id is not None:
                config["chain"]["rpc"]["chain_id"] = chain_id

        return self._edited(path, change)

    def unusable_settings(self, database_url: str) -> tuple[Settings, str]:
        elsewhere = self.directory / "elsewhere"
        elsewhere.mkdir(exist_ok=True)
        deployment = fake_deployment(elsewhere, chain_id=OTHER_CHAIN_ID)
        path = daemon_config(self.world, self.directory, database_url)

        def change(config: dict[str, Any]) -> None:
            config["chain"]["deployment_file"] = str(deployment)

        return self._edited(path, change), "chain.deployment_file"

    def _ask(self, text: str) -> str:
        async def run() -> str:
            async with manager_for(self.anvil.url, key=REQUESTER_KEY) as requester:
                due = int(chain_time(self.anvil)) - 60
                asked = await ask(
                    requester, self.world.oracle, text=text, earliest_time=due, liveness=60
                )
            return asked.question_id

        return f"chain:{asyncio.run(run())}"

    def ask_answerable_question(self) -> str:
        return self._ask(f"Did contract event {next(_numbers)} happen as its rules describe?")

    def ask_hostile_question(self) -> Hostile:
        # Anyone may ask: the text is delivered as it is, shown escaped to a person.
        return Hostile(self._ask("Did it\u202e happen?\x00\n" + "\n" * 1000), None)

    def answers_on_venue(self, market_id: str) -> int:
        return self.world.proposals()[market_id.split(":", 1)[1]]

    def sent_by_us(self) -> int:
        return _nonce(self.anvil, self.reporter)

    def end_window(self) -> None:
        self._let_time_pass(lambda: warp_to(self.anvil, chain_time(self.anvil) + 61))

    def answer_on_venue_as_someone_else(self, market_id: str) -> None:
        """Only reporters answer here: the others' word is a dispute, so the question is
        answered (by a reporter outside the daemon) and the requester disputes it."""
        qid = market_id.split(":", 1)[1]

        async def run() -> None:
            async with manager_for(self.anvil.url) as reporter:
                oracle = AgentOracle(reporter.pool, self.world.oracle)
                await ProposalSubmitter(reporter, oracle).propose(answer(qid))
            async with manager_for(self.anvil.url, key=REQUESTER_KEY) as requester:
                intent = await requester.submit(
                    TxRequest(
                        key=f"dispute:{qid}",
                        to=self.world.oracle,
                        data=encode_call(
                            ORACLE,
                            "dispute",
                            bytes.fromhex(qid[2:]),
                            "0x" + "00" * 20,
                            DEFAULT_BOND_WEI,
                        ),
                        value=DEFAULT_BOND_WEI,
                    )
                )
                assert intent.state == IntentState.CONFIRMED, intent.error

        asyncio.run(run())

    def venue_time(self) -> float:
        return chain_time(self.anvil)


class UmaWorld(VenueWorld):
    """UMA's Optimistic Oracle V2 (`tests/daemon/test_uma_e2e.py`), liveness 2 h."""

    kind = "uma"
    classes = (UmaVenue, UmaVenue)
    ports = frozenset(
        {
            AnsweredByOthers,
            Challenger,
            Funded,
            InvalidAnswers,
            Monitored,
            Refreshing,
            VenueClock,
            VenueReview,
        }
    )

    def __init__(self, anvil: Anvil, directory: Path) -> None:
        super().__init__(directory)
        self.anvil = anvil
        self.world = uma_e2e.UmaWorld(anvil, directory)

    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        self.world.config(database_url, source={"dispute": "after_review"})
        return self._with_chain_id(self.directory / "config.yaml", chain_id)

    def unusable_settings(self, database_url: str) -> tuple[Settings, str]:
        return self._source_at(database_url, "oracle_address", uma_e2e.OTHER)

    def ask_answerable_question(self) -> str:
        return self.world.ask(f"Did UMA event {next(_numbers)} happen?", uma_e2e.AGREED)

    def ask_hostile_question(self) -> Hostile:
        # A request that cannot be read exactly is a market for a person, not a line.
        return Hostile(f"uma:{uma_e2e.ask_unreadable(self.world).id_hex}", None)

    def answers_on_venue(self, market_id: str) -> int:
        return self.world.proposals(market_id)

    def sent_by_us(self) -> int:
        return _nonce(self.anvil, uma_e2e.OURS)

    def end_window(self) -> None:
        self._let_time_pass(self.world.pass_time)

    def answer_on_venue_as_someone_else(self, market_id: str) -> None:
        uma_e2e.propose_as_other(self.world, market_id, 0)  # NO
        # A dispute re-asks the DVM at the request's time, and its gas estimate runs on
        # the latest block: a block past the ask's second first (as test_uma_e2e does).
        self.anvil.rpc("evm_increaseTime", 2)
        self.anvil.mine()

    def ask_question_answered_by_someone_else(self) -> tuple[str, str]:
        market_id = self.ask_answerable_question()
        self.answer_on_venue_as_someone_else(market_id)
        return market_id, "NO"

    def challenges_on_venue(self, market_id: str) -> int:
        return self.world.proposals(market_id, "DisputePrice")

    def venue_time(self) -> float:
        return chain_time(self.anvil)


class UmaV3World(VenueWorld):
    """UMA's Optimistic Oracle V3 (`tests/daemon/test_uma_v3_e2e.py`): claim markets of
    the venue's configuration, and another asserter's claims watched."""

    kind = "uma_v3"
    classes = (UmaV3Venue, UmaV3Venue)
    ports = frozenset({Challenger, Funded, Monitored, VenueClock})

    def __init__(self, anvil: Anvil, directory: Path) -> None:
        super().__init__(directory)
        self.anvil = anvil
        self.world = uma_v3_e2e.V3World(anvil, directory)
        self.questions: dict[str, str] = {}

    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        self.world.config(
            database_url, second_opinion={"asserters": [uma_v3_e2e.OTHER]}, dispute="after_review"
        )
        # Verdicts gathered for a multicall for a tenth of a second, not the default's seconds.
        path = self.directory / "config.yaml"
        return self._with_chain_id(path, chain_id, batch_window=0.1)

    def unusable_settings(self, database_url: str) -> tuple[Settings, str]:
        return self._source_at(database_url, "oracle_address", uma_v3_e2e.STRANGER)

    def ask_answerable_question(self) -> str:
        number = next(_numbers)
        question = f"Did claim event {number} happen?"
        market_id = self.world.claim_market(f"claim-{number}", question, uma_v3_e2e.YES_AGREED)
        self.questions[market_id] = question
        return market_id

    def ask_hostile_question(self) -> Hostile:
        assertion = self.world.assert_as(uma_v3_e2e.OTHER_KEY, b"\xff\xfe\x00\x01\x7f")
        return Hostile(f"{uma_v3_e2e.SOURCE}:assertion:{assertion}", f"assertion {assertion}")

    def answers_on_venue(self, market_id: str) -> int:
        question = self.questions[market_id].encode()
        return sum(question in bytes(a["claim"]) for a in self.world.assertions_by(uma_v3_e2e.OURS))

    def sent_by_us(self) -> int:
        return _nonce(self.anvil, uma_v3_e2e.OURS)

    def end_window(self) -> None:
        self._let_time_pass(self.world.pass_time)

    def ask_question_answered_by_someone_else(self) -> tuple[str, str]:
        """Another asserter's claim (watched): their answer is that it is true."""
        number = next(_numbers)
        assertion = self.world.assert_as(uma_v3_e2e.OTHER_KEY, f"Claim {number} holds.".encode())
        return f"{uma_v3_e2e.SOURCE}:assertion:{assertion}", "YES"

    def challenges_on_venue(self, market_id: str) -> int:
        return len(self.world.disputes_of(market_id.rsplit(":", 1)[1]))

    def venue_time(self) -> float:
        return chain_time(self.anvil)


class RealityWorld(VenueWorld):
    """Reality.eth v3 (`tests/daemon/test_reality_e2e.py`), timeout 1 h."""

    kind = "reality"
    classes = (RealityVenue, RealityVenue)
    ports = frozenset({AnsweredByOthers, Challenger, Funded, InvalidAnswers, Monitored, VenueClock})

    def __init__(self, anvil: Anvil, directory: Path) -> None:
        super().__init__(directory)
        self.anvil = anvil
        self.world = reality_e2e.RealityWorld(anvil, directory)

    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        self.world.config(database_url, source={"counter_answer": "after_review"})
        return self._with_chain_id(self.directory / "config.yaml", chain_id)

    def unusable_settings(self, database_url: str) -> tuple[Settings, str]:
        return self._source_at(database_url, "contract_address", reality_e2e.OTHER)

    def ask_answerable_question(self) -> str:
        return self.world.ask(f"Did Reality event {next(_numbers)} happen?", reality_e2e.AGREED)

    def ask_hostile_question(self) -> Hostile:
        text = encode_question_text(QuestionKind.BOOL, "Did it\x00 happen?", category="news")

        async def run() -> bytes:
            async with manager_for(self.anvil.url, key=reality_e2e.ASKER_KEY) as asker:
                return await ask_question(
                    asker,
                    self.world.reality,
                    template_id=0,
                    text=text,
                    arbitrator=self.world.arbitrator,
                    timeout=reality_e2e.TIMEOUT,
                    nonce=next(_numbers),
                    opening_ts=int(chain_time(self.anvil)),
                    min_bond=reality_e2e.MIN_BOND,
                )

        question = "0x" + asyncio.run(run()).hex()
        return Hostile(f"reality:{question}", f"question {question}")

    def answers_on_venue(self, market_id: str) -> int:
        return sum(answerer == reality_e2e.OURS for answerer, _, _ in self.world.history(market_id))

    def sent_by_us(self) -> int:
        return _nonce(self.anvil, reality_e2e.OURS)

    def end_window(self) -> None:
        self._let_time_pass(lambda: self.world.elapse(reality_e2e.TIMEOUT + 1))

    def answer_on_venue_as_someone_else(self, market_id: str) -> None:
        self.world.counter(market_id, reality_e2e.NO_WORD)

    def ask_question_answered_by_someone_else(self) -> tuple[str, str]:
        market_id = self.ask_answerable_question()
        self.answer_on_venue_as_someone_else(market_id)
        return market_id, "NO"

    def challenges_on_venue(self, market_id: str) -> int:
        """Our counter-answers: every answer of ours comes after theirs here."""
        return self.answers_on_venue(market_id)

    def venue_time(self) -> float:
        return chain_time(self.anvil)


class HttpWorld(VenueWorld):
    """An off-chain venue: a market list and a result webhook (`tests/daemon/
    test_pipeline.py`'s server), run on its own thread for the module."""

    kind = "http"
    classes = (HttpMarketSource, WebhookResolver)
    ports = frozenset()
    on_chain = False
    windowed = False

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.replays = directory / "replays"
        self.replays.mkdir()
        self.server = HttpVenueServer(markets=[])
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Future[None] | None = None
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self._thread.start()
        assert started.wait(10), "the HTTP venue did not start"

    def _serve(self, started: threading.Event) -> None:
        async def run() -> None:
            self._stop = self._loop.create_future()
            async with serve(self.server):
                started.set()
                await self._stop

        self._loop.run_until_complete(run())

    def close(self) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)

    def settings(self, database_url: str, *, chain_id: int | None = None) -> Settings:
        assert chain_id is None, "an HTTP venue has no chain"
        return settings_for(database_url, self.directory, self.server, self.replays)

    def ask_answerable_question(self) -> str:
        external_id = f"market-{next(_numbers)}"
        self.server.markets.append(
            {"id": external_id, "question": f"Did {external_id} happen?", "resolve_after": 100}
        )
        return f"venue:{external_id}"

    def ask_hostile_question(self) -> Hostile:
        index = len(self.server.markets)
        # A question that is not text: skipped with a line naming the item.
        self.server.markets.append({"id": f"hostile-{index}", "question": 7, "resolve_after": 100})
        return Hostile(f"venue:hostile-{index}", f"item {index}:")

    def answers_on_venue(self, market_id: str) -> int:
        """Distinct answers: a repeat carries the same `Idempotency-Key`, which the venue
        takes as the same answer."""
        external_id = market_id.split(":", 1)[1]
        return len(
            {a["idempotency_key"] for a in self.server.answers if a["market_id"] == external_id}
        )

    def sent_by_us(self) -> int:
        return len({a["idempotency_key"] for a in self.server.answers})


KINDS = ("http", "chain", "uma", "uma_v3", "reality")


def make_world(kind: str, anvil: Callable[[], Anvil], directory: Path) -> VenueWorld:
    """The world of `kind`; `anvil()` the module's node (started only for a chain kind)."""
    if kind == "http":
        return HttpWorld(directory)
    chain_worlds: dict[str, Callable[[Anvil, Path], VenueWorld]] = {
        "chain": ChainWorld,
        "uma": UmaWorld,
        "uma_v3": UmaV3World,
        "reality": RealityWorld,
    }
    return chain_worlds[kind](anvil(), directory)
