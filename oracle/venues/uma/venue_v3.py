"""UMA's Optimistic Oracle V3 as the daemon's market source and resolver.

Two kinds of markets, told apart by `details["kind"]`:

* `claim`: a claim-style market of the venue's configuration (`markets[]`), id
  `<source>:claim:<id>`, due at its `resolve_after` on the chain's clock. A verdict to
  submit (or a person's decision) is asserted through `UmaAsserter`: the claim names the
  market, the outcome and `sha256:<proof checksum>` (`oracle.core.claims`), one intent
  per claim, found again among this signer's `AssertionMade` events after a crash or on
  another replica, so it is bonded once. Before the bond is posted it is weighed against
  the venue's caps (`oracle.core.bonds.check_bond`: a refusal is a `uma.bond_refused`
  log line, `oracle_bond_refusals_total{venue,reason}` and a retried delivery).
* `assertion`: someone else's assertion (`AssertionMade` events matching
  `second_opinion`), id `<source>:assertion:<assertion id>`, question "Is this claim
  true? <the claim, bounded>", outcomes YES and NO. `propose` sends nothing for it: it
  records our verdict beside theirs, and a `disagreement` (a review item, and
  `oracle_venue_disagreements_total`) when our verdict is not YES. With `dispute:
  after_review`, that receipt offers a `dispute` while the assertion can still be disputed;
  once a person confirms it in the review queue, the daemon calls `challenge`: the
  assertion is read again (disputed, expired, settled, ours, or the decided outcome YES:
  recorded, nothing sent), the dispute's bond (the assertion's, in its currency) weighed
  against `max_bond_per_assertion` and `max_bond_outstanding` (the refusal as for an
  assertion), then `disputeAssertion` through `UmaAsserter.dispute` (one intent per
  assertion across crashes, allowance and balance as for an assertion). Our disputes
  count among the bonds outstanding until settled.

`state` reads `getAssertion` (what `AssertionDisputed` and `AssertionSettled` change):
ASSERTED is proposed, DISPUTED disputed, EXPIRED (undisputed, liveness over: it can only
settle true) and SETTLED are final, with the settled truth as the market's outcome
(`uma-settlement` in the accuracy ledger). `settle` settles our own assertions once
expired; a disputed one of ours, or one we disputed, is settled as soon as the vote has a
price (when `settle` is on).

Verdicts reached within `batch_window` seconds of each other are asserted together in one
`multicall` (OOv3 is a `MultiCaller`: each call runs with our account as `msg.sender`),
which saves gas per claim (docs/venues.md); each claim keeps its own key as a subject of the
batch's intent, so a market retried after a crash never asserts its claim twice. The
claims of one batch share their terms (the venue's bond, currency, liveness), so a batch
reverts only where each of its claims would.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.checkpoint import CheckpointStore
from oracle.chain.contracts import load_artifact
from oracle.chain.events import DecodedLog, EventDecoder, address_topic
from oracle.chain.intents import BondHold, IntentState
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import LogScanner, scan_name
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager
from oracle.core.bonds import BondCaps, to_units
from oracle.core.claims import assertion_claim, read_claim
from oracle.core.markets import MarketSpec
from oracle.core.scoring import Finality
from oracle.core.timing import venue_window
from oracle.daemon.chain_parts import (
    ChainConnection,
    TokenBonds,
    chain_failure,
    intent_failure,
    settled_reference,
)
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import (
    Challenged,
    ChallengeSent,
    Deliver,
    MarketRef,
    Receipt,
    Resolution,
    ResolutionStatus,
)
from oracle.errors import BondRefused, ChainError, ResolverError
from oracle.log import emit
from oracle.venues.uma.binding import OPTIMISTIC_ORACLE_V3
from oracle.venues.uma.binding_v3 import (
    Asserted,
    AssertionMade,
    AssertionState,
    AssertionView,
    Claim,
    OptimisticOracleV3,
    UmaAsserter,
)
from oracle.venues.uma.bonds import UmaBondVenue
from oracle.venues.uma.settings import ClaimMarketConfig, UmaV3SourceConfig

logger = logging.getLogger("oracle.daemon.uma_v3")

CLAIM, ASSERTION = "claim", "assertion"
YES, NO = "YES", "NO"


def settled_outcome(market: MarketRef, truth: bool) -> str:
    """The market's outcome once its assertion settled `truth`: for someone else's claim,
    YES or NO; for ours, the outcome we asserted, or (false) the other of two outcomes,
    `not:<ours>` when there are more."""
    if market.details.get("kind") == ASSERTION:
        return YES if truth else NO
    asserted = str(market.submission.get("asserted_outcome", ""))
    if truth:
        return asserted
    others = [o for o in market.outcomes if o != asserted]
    return others[0] if len(others) == 1 else f"not:{asserted}"


@dataclass(frozen=True)
class _Batch:
    """Claims to assert in one transaction, and how that ended, for each in order."""

    claims: list[Claim]
    done: asyncio.Future[list[Asserted | BondRefused]]


@dataclass(frozen=True)
class UmaV3Parts:
    """What the venue works with, made by the composition root when it starts."""

    pool: RpcPool
    manager: TxManager
    oracle: OptimisticOracleV3
    asserter: UmaAsserter
    checkpoints: CheckpointStore
    start_block: int
    scanner_settings: ScannerSettings


OpenUmaV3 = Callable[[], Awaitable[UmaV3Parts]]


class _OurAssertions:
    """Our assertions not settled yet (their bonds at risk): this signer's `AssertionMade`
    events, read from where the last read ended (from the start block after a restart),
    each dropped once settled."""

    def __init__(self, parts: UmaV3Parts) -> None:
        self._parts = parts
        self._from = parts.start_block
        self._open: set[str] = set()

    async def at_risk(self) -> dict[str, int]:
        """Bonds posted and not returned, by currency (EIP-55)."""
        parts = self._parts
        head = int(await parts.pool.call("eth_blockNumber", lambda w3: w3.eth.block_number))
        if self._from <= head:  # a node refuses a range that starts past its head
            for made in await parts.oracle.assertions_by(parts.manager.address, self._from):
                self._open.add(made.assertion_id)
            # Assertions we disputed: our dispute's bond (the assertion's) is at risk too.
            self._open.update(await parts.oracle.disputed_by(parts.manager.address, self._from))
            self._from = head + 1
        ids = sorted(self._open)
        totals: dict[str, int] = {}
        for assertion_id, view in zip(ids, await parts.oracle.get_assertions(ids), strict=True):
            if view.settled or not view.exists:
                self._open.discard(assertion_id)
                continue
            totals[view.currency] = totals.get(view.currency, 0) + view.bond
        return totals


class UmaV3Venue(UmaBondVenue[UmaV3Parts]):
    """Market source and resolver for one OptimisticOracleV3."""

    _logger = logger

    def __init__(
        self,
        config: UmaV3SourceConfig,
        open_chain: OpenUmaV3,
        metrics: DaemonMetrics | None = None,
    ) -> None:
        self.name = config.name
        self.config = config
        self._chain = ChainConnection(
            self.name,
            open_chain,
            logger,
            "uma_v3.venue_started",
            self._started,
            gauges=self._report_bonds,
        )
        self._metrics = metrics
        self._ours: _OurAssertions | None = None
        self._scanner: LogScanner | None = None
        self._tokens = TokenBonds(metrics, self.name, config.risk.min_bond_balance)
        self._currencies: set[str] = set()
        self._batch: _Batch | None = None  # the batch open to more claims
        opinion = config.second_opinion
        asserters = (opinion.asserters if opinion else None) or ()
        managers = (opinion.escalation_managers if opinion else None) or ()
        prefixes = (opinion.claim_prefixes if opinion else None) or ()
        self._asserters = frozenset(to_checksum_address(a) for a in asserters)
        self._managers = frozenset(to_checksum_address(a) for a in managers)
        self._prefixes = tuple(p.encode() for p in prefixes)

    # -- connection ---------------------------------------------------------------------------

    def _started(self, parts: UmaV3Parts) -> dict[str, str]:
        self._ours = _OurAssertions(parts)
        if self.config.second_opinion is not None:
            self._scanner = self._assertion_scanner(parts)
        return {"oracle": parts.oracle.address, "asserter": parts.manager.address}

    def _assertion_scanner(self, parts: UmaV3Parts) -> LogScanner:
        only_asserters = not self._managers and not self._prefixes
        return LogScanner(
            parts.pool,
            address=parts.oracle.address,
            decoder=EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V3).abi, "AssertionMade"),
            checkpoints=parts.checkpoints,
            name=scan_name(self.name, parts.pool.chain_id, parts.oracle.address),
            settings=parts.scanner_settings,
            start_block=parts.start_block,
            # Only asserters named: the node filters (asserter is indexed); else we do.
            topics=[None, [address_topic(a) for a in sorted(self._asserters)]]
            if only_asserters
            else [],
        )

    def _bonds_at_risk(self) -> Callable[[], Awaitable[Mapping[str, int]]]:
        assert self._ours is not None
        return self._ours.at_risk

    # -- MarketSource -------------------------------------------------------------------------

    async def poll(self, deliver: Deliver) -> list[str]:
        with self._source_failure():
            parts = await self._ready()
        # The configured markets, at every poll: the store keeps the first report.
        await deliver([self._claim_market(parts, m) for m in self.config.markets])
        skipped: list[str] = []
        if self._scanner is None:
            return skipped

        async def handle(logs: list[DecodedLog]) -> None:
            wanted = [AssertionMade.from_log(log) for log in logs if self._watched(parts, log)]
            views = await parts.oracle.get_assertions([m.assertion_id for m in wanted])
            # The bond currency's symbol and decimals, for people (`oracle.core.amounts`).
            named = {
                c: await self._tokens.named(parts.pool, c) for c in {v.currency for v in views}
            }
            specs = []
            for assertion, view in zip(wanted, views, strict=True):
                try:
                    spec = self._assertion_market(parts, assertion, view)
                    specs.append(replace(spec, details={**spec.details, **named[view.currency]}))
                except ValueError as error:
                    skipped.append(f"assertion {assertion.assertion_id}: {error}")
            await deliver(specs)

        with self._source_failure():
            await self._scanner.poll(handle)
        return skipped

    def _claim_market(self, parts: UmaV3Parts, market: ClaimMarketConfig) -> MarketSpec:
        return MarketSpec(
            source=self.name,
            external_id=f"{CLAIM}:{market.id}",
            question=market.question,
            criteria=market.criteria,
            resolve_after=market.resolve_after.timestamp(),
            window=venue_window(market.resolve_after.timestamp(), "the claim's resolve_after"),
            outcomes=market.outcomes,
            details={"kind": CLAIM, "claim_id": market.id, "oracle": parts.oracle.address},
            awaits_settlement=self.config.settle,
        )

    def _watched(self, parts: UmaV3Parts, log: DecodedLog) -> bool:
        """Someone else's assertion matching any `second_opinion` filter."""
        asserter = to_checksum_address(log.args["asserter"])
        if asserter == parts.manager.address:
            return False  # ours: a claim market of this venue already
        return (
            asserter in self._asserters
            or to_checksum_address(log.args["escalationManager"]) in self._managers
            or (bool(self._prefixes) and bytes(log.args["claim"]).startswith(self._prefixes))
        )

    def _assertion_market(
        self, parts: UmaV3Parts, made: AssertionMade, view: AssertionView
    ) -> MarketSpec:
        claim = read_claim(made.claim)
        return MarketSpec(
            source=self.name,
            external_id=f"{ASSERTION}:{made.assertion_id}",
            question=f"Is this claim true? {claim}",
            resolve_after=float(view.assertion_time),
            window=venue_window(float(view.assertion_time), "the assertion's time"),
            outcomes=(YES, NO),
            details={
                "kind": ASSERTION,
                "oracle": parts.oracle.address,
                "assertion_id": made.assertion_id,
                "asserter": made.asserter,
                "escalation_manager": view.escalation_manager,
                "claim": claim,
                "bond": str(made.bond),
                "currency": view.currency,
                "expiration_time": made.expiration_time,
                "block_number": made.block_number,
                "tx_hash": made.tx_hash,
            },
        )

    # -- Resolver -----------------------------------------------------------------------------

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        """Assert our verdict on a claim market once; on someone else's assertion, record
        our verdict beside theirs (see the module docstring)."""
        try:
            parts = await self._ready()
            if market.details.get("kind") == ASSERTION:
                return await self._second_opinion(parts, market, outcome)
            claim = await self._claim(parts, market, outcome, proof_checksum)
            named = await self._tokens.named(parts.pool, claim.currency)
            key = parts.asserter.assertion_key(claim)
            new = await parts.manager.carrier(key) is None
            holds: list[BondHold] = []
            if new and not await parts.asserter.find([claim]):
                holds.append(await self._guard(parts, market, claim.currency, claim.bond))
            with parts.manager.bonded(key, holds):
                asserted, batched = await self._assert(parts, claim)
        except BondRefused as refused:
            raise self._refused(refused, market=market.market_id, action="assert") from None
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        intent, made = asserted.intent, asserted.assertion
        if intent.state in (IntentState.REVERTED, IntentState.FAILED):
            raise intent_failure(self.name, "assertion", intent)
        if made is None:
            raise ResolverError(f"source {self.name}: the assertion is not on-chain yet")
        ours_sent = intent.inclusion is not None and intent.sender == parts.manager.address
        return Receipt(
            reference=made.tx_hash,
            final_after=float(made.expiration_time),
            # A multicall's gas, shared by the claims it asserted (counted once in all).
            gas_used=intent.inclusion.gas_used // batched if ours_sent and intent.inclusion else 0,
            details={
                "assertion_id": made.assertion_id,
                "asserted_outcome": outcome,
                "claim": made.claim.decode(),
                "bond": str(made.bond),
                "currency": claim.currency,
                **named,
                "asserted_with": batched,  # claims in the same transaction, this one included
            },
        )

    async def _assert(self, parts: UmaV3Parts, claim: Claim) -> tuple[Asserted, int]:
        """Assert `claim`, with the claims other markets hand over within `batch_window`
        seconds in one `multicall`: how it ended, and how many claims the batch held.

        The first caller waits the window and sends for all (its own claim first); one
        claim alone goes as a plain `assertTruth`. Exactly once holds per claim: each
        claim's key is a subject of the batch intent, and a market retried after a crash
        finds its claim on-chain among our `AssertionMade` events (or waits while the
        batch holds its subject)."""
        window = self.config.batch_window
        if window <= 0:
            return await parts.asserter.assert_truth(claim), 1
        batch = self._batch
        if batch is not None:
            batch.claims.append(claim)
            ended = await asyncio.shield(batch.done)
            return _asserted(ended[batch.claims.index(claim)]), len(batch.claims)
        batch = self._batch = _Batch([claim], asyncio.get_running_loop().create_future())
        # Marks a failure as seen: the followers (if any) raise it.
        batch.done.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await asyncio.sleep(window)
            self._batch = None  # closed: later claims start the next batch
            claims = batch.claims
            results: list[Asserted | BondRefused]
            if len(claims) == 1:
                results = [await parts.asserter.assert_truth(claim)]
            else:
                keys = sorted(parts.asserter.assertion_key(c) for c in claims)
                batch_key = HexBytes(keccak("\n".join(keys).encode())).to_0x_hex()
                try:
                    results = list(await parts.asserter.assert_many(claims, batch_key))
                except BondRefused:
                    # The batch's bonds do not fit the budget together: each claim on its
                    # own, in order, as many as fit (each refusal is its claim's).
                    results = [await _one(parts.asserter, c) for c in claims]
        except BaseException as error:
            if self._batch is batch:
                self._batch = None
            if not batch.done.done():
                failure = error if isinstance(error, Exception) else ChainError("batch cancelled")
                batch.done.set_exception(failure)
            raise
        batch.done.set_result(results)
        return _asserted(results[0]), len(claims)

    async def _claim(
        self, parts: UmaV3Parts, market: MarketRef, outcome: str, proof_checksum: str
    ) -> Claim:
        """What asserting `outcome` on `market` posts: the claim and its terms."""
        bond = self.config.bond
        currency = bond.currency or await parts.oracle.default_currency()
        amount = (
            await parts.oracle.minimum_bond(currency)
            if bond.amount is None
            else to_units(bond.amount, await self._tokens.decimals(parts.pool, currency))
        )
        liveness = bond.liveness or await parts.oracle.default_liveness()
        configured = {m.id: m.question for m in self.config.markets}
        question = configured.get(market.details["claim_id"])
        if question is None:
            raise ResolverError(
                f"source {self.name}: market {market.details['claim_id']} is no longer "
                "configured: nothing asserted",
                retryable=False,
            )
        try:
            text = assertion_claim(
                market_id=market.market_id,
                question=question,
                outcome=outcome,
                proof_checksum=proof_checksum,
            )
            return Claim(text=text, bond=amount, liveness=liveness, currency=currency)
        except ValueError as error:
            raise ResolverError(f"source {self.name}: {error}", retryable=False) from None

    async def _guard(
        self,
        parts: UmaV3Parts,
        market: MarketRef,
        currency: str,
        bond: int,
        *,
        dispute: bool = False,
    ) -> BondHold:
        """Refuse (ResolverError, retried later) a bond (of an assertion, or of a
        `dispute`) the risk caps do not allow as things stand; else the bond to reserve
        when its intent is recorded (where the budget weighs it again, atomically)."""
        risk = self.config.risk
        caps = BondCaps.in_units(
            await self._tokens.decimals(parts.pool, currency),
            max_per_request=risk.max_bond_per_assertion,
            max_outstanding=risk.max_bond_outstanding,
        )
        # OOv3 pays no reward and takes no final fee beside the bond.
        return await self._hold(
            parts,
            currency,
            caps,
            bond=bond,
            market=market.market_id,
            action="dispute" if dispute else "assert",
        )

    async def _second_opinion(self, parts: UmaV3Parts, market: MarketRef, outcome: str) -> Receipt:
        assertion_id = market.details["assertion_id"]
        view = await parts.oracle.get_assertion(assertion_id)
        if not view.exists:
            raise ResolverError(f"source {self.name}: assertion {assertion_id} not found")
        agrees = outcome == YES
        details: dict[str, Any] = {
            "assertion_id": assertion_id,
            "asserter": view.asserter,
            "asserted_by_other": True,
            "their_outcome": YES,
            "our_outcome": outcome,
            "agrees": agrees,
        }
        disagreement = None
        if not agrees:
            disagreement = (
                f"{view.asserter} asserted on UMA's Optimistic Oracle V3 (assertion "
                f"{assertion_id}) that: {market.details.get('claim', '')[:500]}; our verdict "
                f"is {outcome}, not YES"
            )
        offer = (
            "dispute"
            if disagreement is not None
            and self.config.dispute == "after_review"
            and view.disputable(await self.now())
            else None
        )
        return Receipt(
            reference=f"asserted-by:{view.asserter}",
            final_after=float(view.expiration_time),
            details=details,
            disagreement=disagreement,
            challenge=offer,
        )

    async def challenge(self, market: MarketRef, outcome: str) -> Challenged:
        """Dispute someone else's assertion, a person having confirmed it (see the module
        docstring): once, and never a reverted transaction."""
        if self.config.dispute != "after_review":
            raise ResolverError(
                f"source {self.name}: dispute is {self.config.dispute}: nothing is disputed",
                retryable=False,
            )
        if market.details.get("kind") != ASSERTION:
            raise ResolverError(
                f"source {self.name}: market {market.market_id} is not someone else's "
                "assertion: nothing is disputed",
                retryable=False,
            )
        assertion_id = str(market.details["assertion_id"])
        try:
            parts = await self._ready()
            us = parts.manager.address
            key = parts.asserter.dispute_key(assertion_id)
            new = await parts.manager.carrier(key) is None
            holds: list[BondHold] = []
            if new:
                view = await parts.oracle.get_assertion(assertion_id)
                now = await self.now()
                moot = _dispute_moot(assertion_id, view, outcome, us, now)
                if moot is not None:
                    emit(logger, logging.INFO, "uma.dispute_moot", source=self.name, reason=moot)
                    return Challenged(None, moot)
                holds.append(
                    await self._guard(parts, market, view.currency, view.bond, dispute=True)
                )
            with parts.manager.bonded(key, holds):
                intent = await parts.asserter.dispute(assertion_id)
            view = await parts.oracle.get_assertion(assertion_id)
        except BondRefused as refused:
            raise self._refused(refused, market=market.market_id, action="dispute") from None
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        if intent.state in (IntentState.REVERTED, IntentState.FAILED):
            raise intent_failure(self.name, "dispute", intent)
        if view.disputer.lower() != us.lower():
            # Skipped at the last check: the assertion moved on before our dispute went out.
            return Challenged(
                None,
                f"assertion {assertion_id} was {view.state(await self.now()).value} before our "
                "dispute went out: nothing was sent",
            )
        inclusion = intent.inclusion
        reference = inclusion.tx_hash if inclusion is not None else f"disputed:{assertion_id}"
        return Challenged(
            ChallengeSent.DISPUTED,
            f"disputed {view.asserter}'s assertion {assertion_id} as {reference}; UMA's vote "
            "decides",
            Receipt(
                reference=reference,
                final_after=float(view.expiration_time),
                gas_used=inclusion.gas_used if inclusion is not None else 0,
                details={**market.submission, "disputer": us, "dispute_bond": str(view.bond)},
            ),
        )

    async def state(self, market: MarketRef) -> Resolution:
        assertion_id = market.details.get("assertion_id") or market.submission.get("assertion_id")
        if not assertion_id:
            return Resolution(ResolutionStatus.OPEN)
        try:
            parts = await self._ready()
            view = await parts.oracle.get_assertion(assertion_id)
            now = await self.now()
            state = view.state(now)
            if state == AssertionState.DISPUTED and self._settles(market):
                # Ours, disputed: settled (both bonds to the winner) once the vote has a price.
                intent = await parts.asserter.settle(assertion_id, now)
                if intent is not None and intent.state == IntentState.CONFIRMED:
                    view = await parts.oracle.get_assertion(assertion_id)
                    state = view.state(now)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        expiration = float(view.expiration_time) if view.exists else None
        if state == AssertionState.NONE:
            return Resolution(ResolutionStatus.OPEN)
        if state == AssertionState.ASSERTED:
            return Resolution(ResolutionStatus.PROPOSED, None, expiration)
        if state == AssertionState.DISPUTED:
            return Resolution(
                ResolutionStatus.DISPUTED,
                None,
                expiration,
                reason=f"assertion {assertion_id} disputed by {view.disputer}",
            )
        truth = view.settlement_resolution if state == AssertionState.SETTLED else True
        return Resolution(
            ResolutionStatus.FINAL,
            settled_outcome(market, truth),
            expiration,
            Finality.UMA_SETTLEMENT,
        )

    def _settles(self, market: MarketRef) -> bool:
        """Ours to settle: our assertion, or someone else's we disputed."""
        ours = market.details.get("kind") == CLAIM or "disputer" in market.submission
        return self.config.settle and ours

    async def settle(self, market: MarketRef) -> str | None:
        """Settle our assertion once it can be: the transaction (None when someone else
        settled it, or the assertion is someone else's); ResolverError while it cannot."""
        assertion_id = market.submission.get("assertion_id")
        if market.details.get("kind") != CLAIM or not assertion_id:
            return None
        try:
            parts = await self._ready()
            intent = await parts.asserter.settle(assertion_id, await self.now())
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        return settled_reference(self.name, intent, f"assertion {assertion_id} not settleable yet")


def _dispute_moot(
    assertion_id: str, view: AssertionView, outcome: str, us: str, now: float
) -> str | None:
    """Why disputing the assertion makes no sense now (nothing is sent), or None."""
    if not view.disputable(now):
        state = view.state(now).value
        return (
            f"assertion {assertion_id} is {state}: it can no longer be disputed; nothing was sent"
        )
    if view.asserter.lower() == us.lower():
        return f"assertion {assertion_id} is ours: nothing was sent"
    if outcome == YES:
        return f"assertion {assertion_id}: the decided outcome is YES, its own; nothing was sent"
    return None


async def _one(asserter: UmaAsserter, claim: Claim) -> Asserted | BondRefused:
    try:
        return await asserter.assert_truth(claim)
    except BondRefused as refused:
        return refused


def _asserted(result: Asserted | BondRefused) -> Asserted:
    if isinstance(result, BondRefused):
        raise result
    return result
