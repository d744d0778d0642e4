"""UMA's Optimistic Oracle V2 as the daemon's market source and resolver.

Markets come from `RequestPrice` events (the chain layer's `RequestSource`: configured
requesters and identifiers, checkpoint in the daemon's database, reorg rewind). Each
request becomes a market whose external id is the request id, whose question is the
ancillary data's title and description (`oracle.core.ancillary`), and whose outcomes are
the prices it offers: `NO`, `YES` (or the question's own labels); the 50-50 price is the
verdict `INVALID`, which the agents may answer where the question offers it (a canceled
game; `invalid: propose` proposes an agreed one at that price, `review` hands it to a
person); UMA's too-early price is an outcome only with `allow_too_early`.
A request whose ancillary data cannot be read exactly is a market all the same, one that
goes straight to a person (`MarketSpec.unreadable`): a review item showing the raw text,
escaped, and why it was refused; it has no outcome, is never researched, and no decision
sends anything for it (no bond, no transaction).

A re-ask (Polymarket's adapter asks again, with a new timestamp and the same ancillary
data, from its dispute callback) is a new request and a new market; its details name the
disputed request's market (`reask_of`), found in the same transaction's `DisputePrice`
event, and every request of one question shares `question_key` (keccak256 of requester
and ancillary data).

With `bulletin_board` configured, the updates each question's creator (its `initializer`)
posted on that board by the time the request is discovered become the market's criteria,
bounded and named by hash (`oracle.core.clarifications`, read by `oracle.venues.uma.bulletin`);
the agents see them with the question and the proof records them. The board is read again
right before each research of the market (`refresh`, the same code), so a research-again or
a re-research a person asked for sees the updates posted meanwhile. A board whose answer
could not be used sends the verdict to a person (`review_reasons`: code
`clarifications_unreadable`); a person's decision is proposed as any.

Answers go through `UmaProposer` (one intent per request, allowance set once, balance
checked): a verdict's outcome is proposed at the price the ancillary data gives it. Before
a bond is posted, `oracle.core.bonds.check_bond` weighs its reward against the venue's
minimums, and the signer's one bond budget (`oracle.core.budget`) weighs its bond + final
fee against `max_bond_per_request` and `max_bond_outstanding`: early, then atomically when
the intent is recorded, where the bond is reserved (bonds outstanding are this signer's
`ProposePrice` and `DisputePrice` events not settled yet, on every venue sharing the
signer and currency, plus the bonds reserved and not yet seen there); a refusal is a
`uma.bond_refused` log line, `oracle_bond_refusals_total{venue,reason}` and a retryable
delivery failure. A request someone else proposed first is never sent to: the receipt
records their proposer, price and outcome beside ours, and a `disagreement` when they
differ (the daemon opens a review item). `state` maps `getState`: PROPOSED stays proposed,
DISPUTED is disputed, EXPIRED, RESOLVED and SETTLED are final with the price mapped back
to an outcome; `settle` settles our own proposals once their price is final (settling
someone else's pays them, for our gas).

With `dispute: after_review`, a disagreement's receipt offers a `dispute`; once a person
confirms it in the review queue, the daemon calls `challenge`: the request is read again
(already disputed, expired, settled, or its price the decided outcome's: recorded, nothing
sent), the dispute's bond + final fee weighed against the caps `max_bond_per_request` and
`max_bond_outstanding` (a disputer earns no reward, so the reward minimums do not apply),
then `disputePrice` through `UmaProposer.dispute` (one intent per request, allowance and
balance as for a proposal). Our disputes count among the bonds outstanding until settled.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.checkpoint import CheckpointStore, InMemoryCheckpointStore
from oracle.chain.contracts import load_artifact
from oracle.chain.events import DecodedLog, EventDecoder, address_topic
from oracle.chain.intents import BondHold, IntentState
from oracle.chain.rpc import RpcPool, Web3
from oracle.chain.scanner import LogScanner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager
from oracle.core.ancillary import (
    NO,
    TOO_EARLY,
    UNKNOWN,
    YES,
    AncillaryQuestion,
)
from oracle.core.bonds import (
    BondCaps,
    gas_cost_in_currency,
    reask_review_reasons,
)
from oracle.core.clarifications import ClarificationLimits, clarifications
from oracle.core.clarifications import review_reasons as clarification_review_reasons
from oracle.core.decision import ReviewReason
from oracle.core.markets import HIDDEN_CHARACTERS, MarketSpec
from oracle.core.outcomes import INVALID, InvalidPolicy
from oracle.core.scoring import Finality
from oracle.core.text import visible
from oracle.core.timing import venue_window
from oracle.daemon.chain_parts import (
    ChainConnection,
    TokenBonds,
    chain_failure,
    intent_failure,
    latest_block,
    settled_reference,
)
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import (
    Challenged,
    ChallengeSent,
    Deliver,
    MarketRef,
    Receipt,
    Refreshed,
    Resolution,
    ResolutionStatus,
)
from oracle.errors import (
    AncillaryDataError,
    AwaitingOthers,
    BondRefused,
    ChainError,
    NotWhitelisted,
    ResolverError,
    SourceError,
)
from oracle.log import emit
from oracle.venues.uma.binding import (
    OPTIMISTIC_ORACLE_V2,
    OptimisticOracleV2,
    PriceRequest,
    Proposal,
    RequestKey,
    RequestSource,
    RequestState,
    RequestView,
    UmaProposer,
    identifier_bytes,
)
from oracle.venues.uma.bonds import UmaBondVenue
from oracle.venues.uma.bulletin import BoardUnreadable, BulletinBoard, question_id
from oracle.venues.uma.settings import UmaSourceConfig

logger = logging.getLogger("oracle.daemon.uma")


def outcome_name(meaning: str | None, label: str) -> str:
    """The daemon's outcome for a price option: YES, NO, INVALID (50-50), TOO_EARLY, or
    the question's own label."""
    if meaning == UNKNOWN:
        return INVALID
    return meaning if meaning in (YES, NO, TOO_EARLY) else label


def market_outcomes(question: AncillaryQuestion, *, allow_too_early: bool) -> tuple[str, ...]:
    """The market's outcomes (INVALID, the 50-50 price, is reserved, so not listed: it is
    open to the agents through `UmaVenue.invalid_policy`)."""
    names = []
    for option in question.options:
        name = outcome_name(option.meaning, option.label)
        if name == INVALID or (name == TOO_EARLY and not allow_too_early):
            continue
        names.append(name)
    return tuple(names)


def outcome_of_price(question: AncillaryQuestion, price: int) -> str:
    """The outcome a price on the oracle stands for (`price:<n>` when none offers it)."""
    for option in question.options:
        if option.price == price:
            return outcome_name(option.meaning, option.label)
    return f"price:{price}"


def request_key(details: dict[str, Any]) -> RequestKey:
    """The request a market's details name."""
    return RequestKey(
        details["requester"],
        identifier_bytes(details["identifier"]),
        int(details["timestamp"]),
        bytes(HexBytes(details["ancillary_data"])),
    )


def question_key(key: RequestKey) -> str:
    """What every request of one question shares: keccak256(requester, ancillary data)."""
    return HexBytes(keccak(bytes(HexBytes(key.requester)) + key.ancillary_data)).to_0x_hex()


@dataclass(frozen=True)
class DisputedRequest:
    """A request disputed in a transaction (its `DisputePrice` event): the requester's
    re-ask, asked in the same transaction, names it."""

    key: RequestKey
    proposer: str
    disputer: str


@dataclass(frozen=True)
class UmaParts:
    """What the venue works with, made by the composition root when it starts."""

    pool: RpcPool
    manager: TxManager
    oracle: OptimisticOracleV2
    proposer: UmaProposer
    source: RequestSource
    start_block: int
    scanner_settings: ScannerSettings = field(default_factory=ScannerSettings)
    board: BulletinBoard | None = None  # with `bulletin_board` configured
    # Where the scan of others' proposals keeps its position (the daemon's database).
    checkpoints: CheckpointStore = field(default_factory=InMemoryCheckpointStore)


OpenUma = Callable[[], Awaitable[UmaParts]]


class _OurBonds:
    """The requests this signer proposed on or disputed and has not been paid back for:
    its `ProposePrice` and `DisputePrice` events (scanned from the venue's start block,
    again after a restart: the position is kept in memory on purpose), dropped once
    settled or taken over."""

    def __init__(self, parts: UmaParts) -> None:
        self._oracle = parts.oracle
        self._us = parts.manager.address
        abi = load_artifact(OPTIMISTIC_ORACLE_V2).abi
        us_topic = "0x" + "00" * 12 + parts.manager.address[2:].lower()
        # Unconfirmed proposals and disputes count too: a cap errs on the side of posting less.
        settings = parts.scanner_settings.model_copy(update={"confirmations": 0})
        self._scanners = [
            LogScanner(
                parts.pool,
                address=parts.oracle.address,
                decoder=EventDecoder(abi, event),
                checkpoints=InMemoryCheckpointStore(),
                name=name,
                settings=settings,
                start_block=parts.start_block,
                topics=topics,
            )
            for event, name, topics in (
                ("ProposePrice", "uma-our-proposals", [None, us_topic]),
                ("DisputePrice", "uma-our-disputes", [None, None, us_topic]),
            )
        ]
        self._open: dict[str, RequestKey] = {}

    def add(self, key: RequestKey) -> None:
        self._open[key.id_hex] = key

    async def at_risk(self) -> dict[str, int]:
        """Bond + final fee posted and not returned, by currency (EIP-55)."""
        for scanner in self._scanners:
            for log in await scanner.poll():
                args = log.args
                self.add(
                    RequestKey(
                        args["requester"],
                        args["identifier"],
                        args["timestamp"],
                        args["ancillaryData"],
                    )
                )
        keys = list(self._open.values())
        views = await self._oracle.get_requests(keys)
        totals: dict[str, int] = {}
        us = self._us.lower()
        for key, view in zip(keys, views, strict=True):
            ours = us in (view.proposer.lower(), view.disputer.lower())
            if not ours or view.state == RequestState.SETTLED:
                del self._open[key.id_hex]
                continue
            totals[view.currency] = totals.get(view.currency, 0) + view.total_bond
        return totals


class _OthersProposals:
    """The requests someone other than this signer proposed on or disputed: the oracle's
    `ProposePrice` and `DisputePrice` events of the configured requesters (ours dropped),
    scanned behind the confirmation depth from checkpoints in the daemon's database."""

    def __init__(self, parts: UmaParts) -> None:
        self._us = parts.manager.address.lower()
        requesters = parts.source.requesters
        abi = load_artifact(OPTIMISTIC_ORACLE_V2).abi
        self._scanners = [
            (
                LogScanner(
                    parts.pool,
                    address=parts.oracle.address,
                    decoder=EventDecoder(abi, event),
                    checkpoints=parts.checkpoints,
                    name=f"{parts.source.scanner.name}:{checkpoint}",
                    settings=parts.scanner_settings,
                    start_block=parts.start_block,
                    topics=[] if requesters is None else [[address_topic(r) for r in requesters]],
                ),
                party,
            )
            for event, checkpoint, party in (
                ("ProposePrice", "others-proposals", "proposer"),
                ("DisputePrice", "disputes", "disputer"),
            )
        ]

    async def poll(self) -> list[str]:
        found: dict[str, None] = {}
        for scanner, party in self._scanners:
            for log in await scanner.poll():
                args = log.args
                if str(args[party]).lower() == self._us:
                    continue
                key = RequestKey(
                    args["requester"], args["identifier"], args["timestamp"], args["ancillaryData"]
                )
                found[key.id_hex] = None
        return list(found)


class UmaVenue(UmaBondVenue[UmaParts]):
    """Market source and resolver for one OptimisticOracleV2."""

    _logger = logger

    def __init__(
        self, config: UmaSourceConfig, open_chain: OpenUma, metrics: DaemonMetrics | None = None
    ) -> None:
        self.name = config.name
        self.config = config
        self._metrics = metrics
        self._bonds: _OurBonds | None = None
        self._others: _OthersProposals | None = None
        self._tokens = TokenBonds(metrics, self.name, config.risk.min_bond_balance)
        self._currencies: set[str] = set()
        self._chain = ChainConnection(
            self.name,
            open_chain,
            logger,
            "uma.venue_started",
            self._started,
            gauges=self._report_bonds,
        )

    # -- connection ---------------------------------------------------------------------------

    def _started(self, parts: UmaParts) -> dict[str, str]:
        self._bonds = _OurBonds(parts)
        self._others = _OthersProposals(parts)
        return {"oracle": parts.oracle.address, "proposer": parts.manager.address}

    def _bonds_at_risk(self) -> Callable[[], Awaitable[Mapping[str, int]]]:
        assert self._bonds is not None
        return self._bonds.at_risk

    # -- MarketSource -------------------------------------------------------------------------

    async def poll(self, deliver: Deliver) -> list[str]:
        with self._source_failure():
            parts = await self._ready()

        async def handle(requests: list[PriceRequest]) -> None:
            disputed = await self._disputed_in(parts, {r.tx_hash for r in requests})
            # The bond a proposal must post (the requester sets it after asking, in the
            # same transaction as Polymarket's adapter does): shown to the reviewer.
            views = await parts.oracle.get_requests([r.key for r in requests])
            clarified = await self._clarifications(parts, [r.key for r in requests])
            # The bond currency's symbol and decimals, for people (`oracle.core.amounts`).
            named = {
                c: await self._tokens.named(parts.pool, c) for c in {r.currency for r in requests}
            }
            specs = []
            for request, view in zip(requests, views, strict=True):
                try:
                    spec = self._market(request, view, disputed, parts.manager.address)
                    if request.key.id_hex in clarified:
                        criteria, record = clarified[request.key.id_hex]
                        spec = replace(
                            spec,
                            criteria=criteria,
                            details={**spec.details, "clarifications": record},
                        )
                except AncillaryDataError as error:
                    spec = self._unreadable(request, view, error)
                specs.append(replace(spec, details={**spec.details, **named[request.currency]}))
            await deliver(specs)

        with self._source_failure():
            await parts.source.poll(handle)
        return []  # a request that cannot be read is a market for a person, not a line

    async def answered_by_others(self) -> list[str]:
        """The requests others proposed on since the last call (`AnsweredByOthers`)."""
        with self._source_failure():
            await self._ready()
            assert self._others is not None
            return await self._others.poll()

    def _market(
        self,
        request: PriceRequest,
        view: RequestView,
        disputed: dict[str, list[DisputedRequest]],
        us: str,
    ) -> MarketSpec:
        key = request.key
        question = key.question()
        outcomes = market_outcomes(question, allow_too_early=self.config.allow_too_early)
        if not outcomes:
            raise AncillaryDataError("ancillary data: res_data: no price a verdict can take")
        shared = question_key(key)
        earlier = next(
            (
                found
                for found in disputed.get(request.tx_hash, [])
                if question_key(found.key) == shared and found.key.id_hex != key.id_hex
            ),
            None,
        )
        self._currencies.add(request.currency)
        title = question.title or "(untitled question)"
        return MarketSpec(
            source=self.name,
            external_id=key.id_hex,
            question=question.text or title,
            resolve_after=float(key.timestamp),
            # An event-based request (Polymarket's) is timestamped when the market was made:
            # when it can be answered, its question says.
            window=None
            if view.event_based
            else venue_window(float(key.timestamp), "the request's timestamp"),
            outcomes=outcomes,
            details={
                **self._request_details(request, view),
                "initializer": question.initializer,
                "prices": {
                    outcome_name(o.meaning, o.label): str(o.price) for o in question.options
                },
                "reask_of": None if earlier is None else f"{self.name}:{earlier.key.id_hex}",
                "disputed_proposal": None
                if earlier is None
                else {
                    "proposer": earlier.proposer,
                    "disputer": earlier.disputer,
                    "ours": earlier.proposer.lower() == us.lower(),
                },
                # Counted on by discovery (`oracle.core.markets.clean_spec`).
                **({HIDDEN_CHARACTERS: question.hidden} if question.hidden else {}),
            },
            awaits_settlement=self.config.settle,
        )

    def _request_details(self, request: PriceRequest, view: RequestView) -> dict[str, Any]:
        """What a request's market records of it, readable or not: where and by whom it
        was asked, what it pays and bonds, and the key its question's every request shares."""
        key = request.key
        return {
            "oracle": self._oracle_address(),
            "request_id": key.id_hex,
            "requester": key.requester,
            "identifier": key.identifier_name,
            "timestamp": key.timestamp,
            "ancillary_data": HexBytes(key.ancillary_data).to_0x_hex(),
            "currency": request.currency,
            "reward": str(request.reward),
            "bond": str(view.bond),
            "final_fee": str(request.final_fee),
            "question_key": question_key(key),
            "block_number": request.block_number,
            "tx_hash": request.tx_hash,
        }

    def _unreadable(
        self, request: PriceRequest, view: RequestView, error: AncillaryDataError
    ) -> MarketSpec:
        """A request whose ancillary data cannot be read exactly, as a market that goes
        straight to a person (`MarketSpec.unreadable`): its question is the raw text,
        escaped (`oracle.core.text.visible`), its review item says why it was refused; it
        has no outcome, is never researched, and nothing is sent for it."""
        key = request.key
        raw = visible(key.ancillary_data.decode("utf-8", errors="backslashreplace"))
        reason = visible(str(error))
        self._currencies.add(request.currency)
        return MarketSpec(
            source=self.name,
            external_id=key.id_hex,
            question=raw or "(empty ancillary data)",
            resolve_after=float(key.timestamp),
            outcomes=(),
            details={
                **self._request_details(request, view),
                "unreadable": {"error": reason, "ancillary_text": raw},
            },
            unreadable=f"unreadable: {reason}",
        )

    async def refresh(self, market: MarketRef) -> Refreshed | None:
        """The market's clarifications read again, right before each research of it (the
        port's `Refreshing`): its criteria and details as discovery makes them, from the
        same code (`_clarifications`), by the chain's latest block. None without a board.
        A node failure raises SourceError: that research attempt fails and is retried."""
        if self.config.bulletin_board is None:
            return None
        key = request_key(market.details)
        try:
            parts = await self._ready()
            clarified = await self._clarifications(parts, [key])
        except ChainError as error:
            raise SourceError(f"source {self.name}: clarifications: {error}") from None
        if key.id_hex not in clarified:  # its ancillary data no longer parses: as discovered
            return None
        criteria, record = clarified[key.id_hex]
        return Refreshed(criteria, {**market.details, "clarifications": record})

    def invalid_policy(self, market: MarketRef) -> InvalidPolicy | None:
        """The port's `InvalidAnswers`: where the question offers the 50-50 price (UNKNOWN,
        Polymarket's `p3: 0.5`), the agents may answer INVALID, and an agreed one goes as
        `invalid` says; where it offers none, INVALID is no answer here."""
        try:
            option = request_key(market.details).question().option(INVALID)
        except (AncillaryDataError, KeyError, TypeError, ValueError):
            return None
        return self.config.invalid if option is not None and option.meaning == UNKNOWN else None

    def review_reasons(self, market: MarketRef) -> list[ReviewReason]:
        """A person must look (the port's `VenueReview`) when the board's answer for the
        question could not be used (`oracle.core.clarifications.review_reasons`), or when
        the market re-asks a request whose proposal, ours, was disputed
        (`oracle.core.bonds.reask_review_reasons`)."""
        return [
            *clarification_review_reasons(market.details.get("clarifications")),
            *reask_review_reasons(market.details.get("disputed_proposal")),
        ]

    async def _clarifications(
        self, parts: UmaParts, keys: list[RequestKey]
    ) -> dict[str, tuple[str, dict[str, Any]]]:
        """With a bulletin board configured: for each request whose question names its
        creator, (criteria, what the details record) from the creator's updates posted by
        now (`oracle.core.clarifications`); a board answer that cannot be used is said so
        in the criteria and recorded as `error`. A node failure raises ChainError: the
        poll (or the research) is tried again."""
        board, settings = parts.board, self.config.bulletin_board
        if board is None or settings is None:
            return {}
        owners: dict[str, str] = {}
        for key in keys:
            try:
                initializer = key.question().initializer
            except AncillaryDataError:
                continue  # skipped by `_market`, with the reason
            if initializer is not None:
                owners[key.id_hex] = initializer
        block = await parts.pool.call("eth_getBlockByNumber", latest_block)
        posted_by = int(block["timestamp"])
        wanted = [k for k in keys if k.id_hex in owners]
        answers = await board.updates(
            [(question_id(k.ancillary_data), owners[k.id_hex]) for k in wanted]
        )
        limits = ClarificationLimits(
            settings.max_updates, settings.max_update_chars, settings.max_total_chars
        )
        found: dict[str, tuple[str, dict[str, Any]]] = {}
        for key in keys:
            if key.id_hex not in owners:  # no creator named: nobody's updates count
                record = {"board": board.address, "read_at": posted_by, "owner": None}
                found[key.id_hex] = ("", {**record, "used": [], "omitted": 0})
        for key, answer in zip(wanted, answers, strict=True):
            owner = owners[key.id_hex]
            record = {"board": board.address, "read_at": posted_by, "owner": owner}
            if isinstance(answer, BoardUnreadable):
                emit(
                    logger,
                    logging.WARNING,
                    "uma.clarifications_unreadable",
                    source=self.name,
                    request=key.id_hex,
                    error=answer,
                )
                found[key.id_hex] = (
                    "Note: the updates the question's creator posted on its bulletin board "
                    "could not be read; they may clarify or change how it resolves.",
                    {**record, "used": [], "error": str(answer)},
                )
                continue
            shown = clarifications(answer, owner=owner, posted_by=posted_by, limits=limits)
            found[key.id_hex] = (shown.text, {**record, **shown.record()})
        return found

    def _oracle_address(self) -> str:
        assert self._parts is not None
        return self._parts.oracle.address

    async def _disputed_in(
        self, parts: UmaParts, tx_hashes: set[str]
    ) -> dict[str, list[DisputedRequest]]:
        """The requests disputed in each transaction: a request asked in the transaction
        that disputed another (the requester's dispute callback) is that one's re-ask."""
        decoder = EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V2).abi, "DisputePrice")
        found: dict[str, list[DisputedRequest]] = {}
        for tx_hash in sorted(tx_hashes):
            receipt = await parts.pool.call(
                "eth_getTransactionReceipt",
                lambda w3, tx=tx_hash: w3.eth.get_transaction_receipt(tx),  # type: ignore[misc]
            )
            for raw in receipt["logs"]:
                topics = raw.get("topics") or []
                if (
                    to_checksum_address(raw["address"]) != parts.oracle.address
                    or not topics
                    or HexBytes(topics[0]).to_0x_hex() != decoder.topic
                ):
                    continue
                log: DecodedLog = decoder.decode(raw)
                args = log.args
                found.setdefault(tx_hash, []).append(
                    DisputedRequest(
                        RequestKey(
                            args["requester"],
                            args["identifier"],
                            args["timestamp"],
                            args["ancillaryData"],
                        ),
                        proposer=to_checksum_address(args["proposer"]),
                        disputer=to_checksum_address(args["disputer"]),
                    )
                )
        return found

    # -- Resolver -----------------------------------------------------------------------------

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        """Propose the price of `outcome` on the market's request, once (see the module
        docstring); the proof checksum stays with the market: OOv2 has no place for it."""
        key, question, price = self._priced(market, outcome)
        try:
            parts = await self._ready()
            proposer = parts.proposer
            intent_key = proposer.proposal_key(key)
            new = await parts.manager.carrier(intent_key) is None
            view = await parts.oracle.get_request(key)
            holds: list[BondHold] = []
            recheck = None
            if new and view.state == RequestState.REQUESTED:
                # The managed oracle: the whitelist first (off it, nothing is approved or
                # signed), then the bond it will really pull (the request manager's).
                terms = await proposer.terms(key, view)
                if terms is not None:
                    if not terms.may_propose(parts.manager.address):
                        raise NotWhitelisted(
                            intent_key, parts.manager.address, parts.oracle.address, key.id_hex
                        )
                    view = replace(view, bond=terms.charged_bond(view.bond))
                holds.append(await self._guard(parts, key, view))
                charged = view

                async def recheck() -> None:
                    # Again in the bond's turn, before its approval: bonds sent meanwhile
                    # count (a refusal now costs no approval).
                    await self._guard(parts, key, charged)

            with parts.manager.bonded(intent_key, holds):
                proposal = await proposer.propose(key, price, recheck=recheck)
        except NotWhitelisted as refused:
            return await self._second_opinion_only(
                parts, key, question, refused, outcome=outcome, price=price
            )
        except BondRefused as refused:
            raise self._refused(refused, request=key.id_hex, action="propose") from None
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        return self._receipt(parts, key, question, proposal, outcome=outcome, price=price)

    def _priced(self, market: MarketRef, outcome: str) -> tuple[RequestKey, AncillaryQuestion, int]:
        """The market's request, its question and the price that says `outcome`; a
        ResolverError, not retried, when its ancillary data cannot say it."""
        key = request_key(market.details)
        try:
            question = key.question()
            price = question.price_for(outcome, allow_too_early=self.config.allow_too_early)
        except AncillaryDataError as error:
            raise ResolverError(f"source {self.name}: {error}", retryable=False) from None
        return key, question, price

    async def _second_opinion_only(
        self,
        parts: UmaParts,
        key: RequestKey,
        question: AncillaryQuestion,
        refused: NotWhitelisted,
        *,
        outcome: str,
        price: int,
    ) -> Receipt:
        """The signer may not propose on this request (the managed oracle's whitelist):
        nothing is approved or sent; our verdict is kept as a second opinion. Once a
        whitelisted proposer's price stands, the receipt compares it with ours (a
        disagreement opens a review item); until then, a retried delivery failure."""
        if self._metrics is not None:
            self._metrics.bond_refusals.labels(self.name, "not_whitelisted").inc()
        try:
            view = await parts.oracle.get_request(key)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        if view.proposed:
            return self._receipt(
                parts, key, question, Proposal(None, view), outcome=outcome, price=price
            )
        emit(
            logger,
            logging.INFO,
            "uma.second_opinion_waits",
            source=self.name,
            request=key.id_hex,
            signer=refused.signer,
            outcome=outcome,
        )
        raise AwaitingOthers(
            f"source {self.name}: {refused}; our verdict {outcome} waits as a second opinion "
            "for a whitelisted proposer's price"
        )

    async def _guard(
        self, parts: UmaParts, key: RequestKey, view: RequestView, *, dispute: bool = False
    ) -> BondHold:
        """Refuse (ResolverError, retried later) a bond the risk caps do not allow, as
        things stand; else the bond to reserve when its intent is recorded (where the
        budget weighs it again, atomically). A dispute (`dispute`) earns no reward, so
        only the bond caps weigh it."""
        risk = self.config.risk
        decimals = await self._tokens.decimals(parts.pool, view.currency)
        caps = BondCaps.in_units(
            decimals,
            max_per_request=risk.max_bond_per_request,
            max_outstanding=risk.max_bond_outstanding,
            min_reward=Decimal(0) if dispute else risk.min_reward,
        )
        gas_cost = None
        if risk.native_token_price is not None and not dispute:
            gas_price = int(await parts.pool.call("eth_gasPrice", _gas_price))
            gas_cost = gas_cost_in_currency(
                risk.proposal_gas, gas_price, risk.native_token_price, decimals
            )
        return await self._hold(
            parts,
            view.currency,
            caps,
            bond=view.bond,
            final_fee=view.final_fee,
            reward=0 if dispute else view.reward,
            gas_cost=gas_cost,
            request=key.id_hex,
            action="dispute" if dispute else "propose",
        )

    def _receipt(
        self,
        parts: UmaParts,
        key: RequestKey,
        question: AncillaryQuestion,
        proposal: Proposal,
        *,
        outcome: str,
        price: int,
    ) -> Receipt:
        view, intent = proposal.request, proposal.intent
        us = parts.manager.address
        if intent is not None and intent.state in (IntentState.REVERTED, IntentState.FAILED):
            raise intent_failure(self.name, "proposal", intent)
        if not view.proposed:
            raise ResolverError(f"source {self.name}: the proposal is not on-chain yet")
        details: dict[str, Any] = {
            "request_id": key.id_hex,
            "proposer": view.proposer,
            "price": str(view.proposed_price),
            "signer": us,  # who would have proposed: the track record's signer
        }
        if proposal.ours(us):
            assert self._bonds is not None
            self._bonds.add(key)
            inclusion = intent.inclusion if intent is not None else None
            ours_sent = inclusion is not None and intent is not None and intent.sender == us
            return Receipt(
                reference=inclusion.tx_hash if inclusion is not None else f"proposed:{key.id_hex}",
                final_after=float(view.expiration_time),
                gas_used=inclusion.gas_used if ours_sent and inclusion is not None else 0,
                details=details,
            )
        theirs = outcome_of_price(question, view.proposed_price)
        agrees = view.proposed_price == price
        details.update({"proposed_by_other": True, "their_outcome": theirs, "our_outcome": outcome})
        details["agrees"] = agrees
        disagreement = None
        if not agrees:
            disagreement = (
                f"{view.proposer} proposed {theirs} (price {view.proposed_price}) on UMA "
                f"request {key.id_hex} before us; our verdict is {outcome} (price {price})"
            )
        offer = (
            "dispute"
            if disagreement is not None
            and self.config.dispute == "after_review"
            and view.state in parts.proposer.disputable
            else None
        )
        return Receipt(
            reference=f"proposed-by:{view.proposer}",
            final_after=float(view.expiration_time),
            details=details,
            disagreement=disagreement,
            challenge=offer,
        )

    async def challenge(self, market: MarketRef, outcome: str) -> Challenged:
        """Dispute the other proposer's price, a person having confirmed it (see the
        module docstring): once, and never a reverted transaction."""
        if self.config.dispute != "after_review":
            raise ResolverError(
                f"source {self.name}: dispute is {self.config.dispute}: nothing is disputed",
                retryable=False,
            )
        key, _, price = self._priced(market, outcome)
        try:
            parts = await self._ready()
            us = parts.manager.address
            intent_key = parts.proposer.dispute_key(key)
            new = await parts.manager.carrier(intent_key) is None
            view = await parts.oracle.get_request(key)
            holds: list[BondHold] = []
            if new:
                moot = self._dispute_moot(key, view, price, us, parts.proposer.disputable)
                if moot is not None:
                    emit(logger, logging.INFO, "uma.dispute_moot", source=self.name, reason=moot)
                    return Challenged(None, moot)
                holds.append(await self._guard(parts, key, view, dispute=True))
            with parts.manager.bonded(intent_key, holds):
                intent = await parts.proposer.dispute(key)
            view = await parts.oracle.get_request(key)
        except BondRefused as refused:
            raise self._refused(refused, request=key.id_hex, action="dispute") from None
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        if intent.state in (IntentState.REVERTED, IntentState.FAILED):
            raise intent_failure(self.name, "dispute", intent)
        if view.disputer.lower() != us.lower():
            # Skipped at the last check: the request moved on before our dispute went out.
            return Challenged(
                None,
                f"UMA request {key.id_hex} was {view.state.name.lower()} before our dispute "
                "went out: nothing was sent",
            )
        assert self._bonds is not None
        self._bonds.add(key)
        inclusion = intent.inclusion
        reference = inclusion.tx_hash if inclusion is not None else f"disputed:{key.id_hex}"
        return Challenged(
            ChallengeSent.DISPUTED,
            f"disputed {view.proposer}'s price {view.proposed_price} on UMA request "
            f"{key.id_hex} as {reference}; the vote decides",
            Receipt(
                reference=reference,
                final_after=float(view.expiration_time),
                gas_used=inclusion.gas_used if inclusion is not None else 0,
                details={
                    **market.submission,
                    "disputer": us,
                    "dispute_bond": str(view.total_bond),
                },
            ),
        )

    @staticmethod
    def _dispute_moot(
        key: RequestKey,
        view: RequestView,
        price: int,
        us: str,
        disputable: tuple[RequestState, ...] = (RequestState.PROPOSED,),
    ) -> str | None:
        """Why disputing the request makes no sense now (nothing is sent), or None."""
        if view.state not in disputable:
            return (
                f"UMA request {key.id_hex} is {view.state.name.lower()}: it can no longer be "
                "disputed; nothing was sent"
            )
        if view.proposer.lower() == us.lower():
            return f"UMA request {key.id_hex}: the proposal is ours; nothing was sent"
        if view.proposed_price == price:
            return (
                f"UMA request {key.id_hex}: the proposed price {price} is the decided outcome's; "
                "nothing was sent"
            )
        return None

    async def state(self, market: MarketRef) -> Resolution:
        key = request_key(market.details)
        try:
            parts = await self._ready()
            view = await parts.oracle.get_request(key)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        expiration = float(view.expiration_time) if view.expiration_time else None
        if view.state == RequestState.EXPIRED and parts.proposer.managed is not None:
            # The managed oracle: disputable until its resolver settles it; not final yet.
            return Resolution(ResolutionStatus.PROPOSED, None, expiration)
        if view.state == RequestState.DISPUTED:
            return Resolution(ResolutionStatus.DISPUTED, None, expiration)
        if view.state == RequestState.EXPIRED:
            price = view.proposed_price
        elif view.state in (RequestState.RESOLVED, RequestState.SETTLED):
            price = view.resolved_price
        elif view.state == RequestState.PROPOSED:
            return Resolution(ResolutionStatus.PROPOSED, None, expiration)
        else:
            return Resolution(ResolutionStatus.OPEN)
        try:
            outcome = outcome_of_price(key.question(), price)
        except AncillaryDataError:
            outcome = f"price:{price}"
        return Resolution(ResolutionStatus.FINAL, outcome, expiration, Finality.UMA_SETTLEMENT)

    async def settle(self, market: MarketRef) -> str | None:
        """Settle the request once its price is final: the settling transaction (or None
        when someone else settled it, or the proposal was someone else's and we did not
        dispute it: settling pays them, and its gas is theirs to spend); ResolverError
        while it cannot be settled yet."""
        key = request_key(market.details)
        if market.submission.get("proposed_by_other") and "disputer" not in market.submission:
            emit(logger, logging.INFO, "uma.settle_left", market=market.market_id)
            return None
        try:
            parts = await self._ready()
            if parts.proposer.managed is not None:
                # Only the managed oracle's resolver role settles: followed, never sent.
                emit(
                    logger,
                    logging.INFO,
                    "uma.settle_left_to_resolver",
                    market=market.market_id,
                    request=key.id_hex,
                )
                return None
            intent = await parts.proposer.settle(key)
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        return settled_reference(self.name, intent, f"request {key.id_hex} is not settleable yet")


async def _gas_price(w3: Web3) -> int:
    return int(await w3.eth.gas_price)
