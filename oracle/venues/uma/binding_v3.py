"""UMA's Optimistic Oracle V3 as the chain layer sees it: assertions of truth, their
state, disputes and settlement.

An assertion is a claim (bytes) with a bond: nobody disputes it within its liveness and it
settles true; someone disputes it (posting the same bond) and UMA's vote decides. Its id
is `keccak256(abi.encode(claim, bond, time, liveness, currency, callbackRecipient,
escalationManager, identifier, msg.sender))`: the block's time is in it, so the same claim
asserted twice is two assertions and two bonds. Exactly once therefore rests on the
intent store and on a pre-send check that looks for the claim among this signer's own
`AssertionMade` events (`asserter` is indexed).

    (none) -assertTruth-> ASSERTED -liveness over-> EXPIRED -settleAssertion-> SETTLED
    ASSERTED -disputeAssertion-> DISPUTED -the vote's price, settleAssertion-> SETTLED

* `OptimisticOracleV3`: typed reads (`get_assertion(s)`, `minimum_bond`, defaults).
* `UmaAsserter`: `assertTruth` through the `TxManager`, one intent per claim under the key
  `uma-assert:<chain id>:<oracle>:<keccak of the claim>`, that key its subject; the bond
  currency's allowance set only when a bond needs it (exactly that, unless configured
  larger) and the balance checked first (`BondAccount`, shared with the OOv2 proposer);
  `assert_many` asserts several claims in one `multicall` transaction (OOv3 is a
  `MultiCaller`: each call runs with the caller as `msg.sender`); `settle`
  settles an expired or resolved assertion once; `dispute` disputes someone else's
  assertion once (`uma-dispute-assertion:<chain id>:<oracle>:<assertion id>`), posting
  the assertion's own bond in its currency through the same `BondAccount`.

The claims the daemon asserts name the market, the answer and the proof's checksum
(`oracle.core.claims`), so anyone reading the chain reaches the proof.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.contracts import _Contract, load_artifact
from oracle.chain.events import DecodedLog, EventDecoder, address_topic
from oracle.chain.intents import Intent
from oracle.chain.rpc import Web3
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import TxError, TxReverted
from oracle.log import emit
from oracle.venues.uma.binding import (
    MAX_UINT256,
    OPTIMISTIC_ORACLE_V3,
    ZERO_ADDRESS,
    BondAccount,
    identifier_bytes,
)

logger = logging.getLogger(__name__)

ASSERT_TRUTH = "ASSERT_TRUTH"
ASSERT_PREFIX = "uma-assert:"
ASSERT_BATCH_PREFIX = "uma-assert-batch:"
SETTLE_ASSERTION_PREFIX = "uma-settle-assertion:"
DISPUTE_ASSERTION_PREFIX = "uma-dispute-assertion:"
NO_DOMAIN = b"\0" * 32


class AssertionState(StrEnum):
    NONE = "none"  # no such assertion
    ASSERTED = "asserted"  # liveness running
    EXPIRED = "expired"  # undisputed, liveness over: settles true
    DISPUTED = "disputed"  # waiting for the vote
    SETTLED = "settled"


@dataclass(frozen=True)
class AssertionView:
    """An assertion as `getAssertion` shows it."""

    asserter: str
    asserting_caller: str
    escalation_manager: str
    assertion_time: int
    expiration_time: int
    settled: bool
    settlement_resolution: bool
    currency: str
    domain_id: bytes
    identifier: bytes
    bond: int
    callback_recipient: str
    disputer: str

    @property
    def exists(self) -> bool:
        return self.asserter != ZERO_ADDRESS

    @property
    def disputed(self) -> bool:
        return self.disputer != ZERO_ADDRESS

    def disputable(self, now: float) -> bool:
        """Whether `disputeAssertion` would take it at `now`: liveness running, undisputed."""
        return self.state(now) == AssertionState.ASSERTED

    def state(self, now: float) -> AssertionState:
        """Its state at `now` (the chain's clock: its latest block's time)."""
        if not self.exists:
            return AssertionState.NONE
        if self.settled:
            return AssertionState.SETTLED
        if self.disputed:
            return AssertionState.DISPUTED
        return AssertionState.EXPIRED if now >= self.expiration_time else AssertionState.ASSERTED


def _assertion_view(raw: tuple[Any, ...]) -> AssertionView:
    settings = raw[0]
    return AssertionView(
        asserting_caller=to_checksum_address(settings[3]),
        escalation_manager=to_checksum_address(settings[4]),
        asserter=to_checksum_address(raw[1]),
        assertion_time=int(raw[2]),
        settled=bool(raw[3]),
        currency=to_checksum_address(raw[4]),
        expiration_time=int(raw[5]),
        settlement_resolution=bool(raw[6]),
        domain_id=bytes(raw[7]),
        identifier=bytes(raw[8]),
        bond=int(raw[9]),
        callback_recipient=to_checksum_address(raw[10]),
        disputer=to_checksum_address(raw[11]),
    )


@dataclass(frozen=True)
class AssertionMade:
    """One `AssertionMade` event."""

    assertion_id: str
    claim: bytes
    asserter: str
    bond: int
    expiration_time: int
    tx_hash: str
    block_number: int

    @classmethod
    def from_log(cls, log: DecodedLog) -> AssertionMade:
        args = log.args
        return cls(
            assertion_id=HexBytes(args["assertionId"]).to_0x_hex(),
            claim=bytes(args["claim"]),
            asserter=to_checksum_address(args["asserter"]),
            bond=int(args["bond"]),
            expiration_time=int(args["expirationTime"]),
            tx_hash=log.tx_hash,
            block_number=log.block_number,
        )


@cache
def _assertion_made() -> EventDecoder:
    return EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V3).abi, "AssertionMade")


@cache
def _assertion_disputed() -> EventDecoder:
    return EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V3).abi, "AssertionDisputed")


class OptimisticOracleV3(_Contract):
    artifact_name = OPTIMISTIC_ORACLE_V3

    async def get_assertion(self, assertion_id: str | bytes) -> AssertionView:
        (view,) = await self.get_assertions([assertion_id])
        return view

    async def get_assertions(self, assertion_ids: Sequence[str | bytes]) -> list[AssertionView]:
        """The assertions, in order, in one JSON-RPC batch request."""
        if not assertion_ids:
            return []
        rows = await self.read_many("getAssertion", [(bytes(HexBytes(a)),) for a in assertion_ids])
        return [_assertion_view(row) for row in rows]

    async def minimum_bond(self, currency: str) -> int:
        return int(await self.read("getMinimumBond", to_checksum_address(currency)))

    async def default_currency(self) -> str:
        return to_checksum_address(await self.read("defaultCurrency"))

    async def default_liveness(self) -> int:
        return int(await self.read("defaultLiveness"))

    async def assertions_by(self, asserter: str, from_block: int = 0) -> list[AssertionMade]:
        """The `AssertionMade` events whose asserter is `asserter`, oldest first."""
        decoder = _assertion_made()
        params = {
            "address": self.address,
            "topics": [decoder.topic, None, address_topic(asserter)],
            "fromBlock": from_block,
            "toBlock": "latest",
        }

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_logs(params)  # type: ignore[arg-type]

        logs = await self.pool.call("eth_getLogs", run)
        return [AssertionMade.from_log(decoder.decode(log)) for log in logs]

    async def disputed_by(self, disputer: str, from_block: int = 0) -> list[str]:
        """The ids of the assertions `disputer` disputed (`AssertionDisputed` events)."""
        decoder = _assertion_disputed()
        params = {
            "address": self.address,
            "topics": [decoder.topic, None, None, address_topic(disputer)],
            "fromBlock": from_block,
            "toBlock": "latest",
        }

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_logs(params)  # type: ignore[arg-type]

        logs = await self.pool.call("eth_getLogs", run)
        return [HexBytes(decoder.decode(log).args["assertionId"]).to_0x_hex() for log in logs]


@dataclass(frozen=True)
class Claim:
    """What to assert: the claim's bytes and its terms."""

    text: bytes
    bond: int
    liveness: int
    currency: str
    identifier: str = ASSERT_TRUTH

    def __post_init__(self) -> None:
        if not self.text:
            raise ValueError("claim: empty")
        if not 0 < self.bond <= MAX_UINT256:
            raise ValueError("bond: a positive uint256")
        if not 0 < self.liveness < 2**64:
            raise ValueError("liveness: a positive uint64")
        object.__setattr__(self, "currency", to_checksum_address(self.currency))
        identifier_bytes(self.identifier)  # ValueError when it cannot be one


@dataclass(frozen=True)
class Asserted:
    """How asserting a claim ended: the intent (CONFIRMED: this call's transaction made
    it; SKIPPED: it was already on-chain) and the assertion as found on-chain (None when
    nothing was asserted)."""

    intent: Intent
    assertion: AssertionMade | None


class UmaAsserter:
    """Asserts claims on an OOv3, settles them, through one `TxManager`.

    `from_block`: where to look for this signer's earlier assertions (the venue's start
    block); its own `AssertionMade` events are the pre-send check's ground truth.
    """

    def __init__(
        self,
        manager: TxManager,
        oracle: OptimisticOracleV3,
        *,
        allowance: int | Callable[[str], Awaitable[int | None]] | None = None,
        from_block: int = 0,
    ) -> None:
        self.manager = manager
        self.oracle = oracle
        self.from_block = from_block
        self.bonds = BondAccount(manager, oracle.address, allowance=allowance)
        # For intents found in the store after a restart (no claim at hand).
        manager.register_precheck(ASSERT_PREFIX, self._recorded_done, contract=oracle.address)
        manager.register_precheck(ASSERT_BATCH_PREFIX, self._recorded_done, contract=oracle.address)
        manager.register_precheck(
            SETTLE_ASSERTION_PREFIX, self._recorded_settle_done, contract=oracle.address
        )
        manager.register_precheck(
            DISPUTE_ASSERTION_PREFIX, self._recorded_dispute_done, contract=oracle.address
        )

    def _recorded_claims(self, intent: Intent) -> tuple[OptimisticOracleV3, list[bytes]]:
        """The oracle a recorded intent calls and the claims its calldata asserts."""
        oracle = OptimisticOracleV3(self.manager.pool, intent.to or self.oracle.address)
        if intent.data in ("", "0x"):
            return oracle, []
        function, args = oracle.decode_call(intent.data)
        calls = args["data"] if function == "multicall" else [intent.data]
        return oracle, [
            bytes(oracle.decode_call(HexBytes(c).to_0x_hex())[1]["claim"]) for c in calls
        ]

    async def _recorded_done(self, intent: Intent) -> bool:
        oracle, claims = self._recorded_claims(intent)
        mine = {m.claim for m in await oracle.assertions_by(intent.sender, self.from_block)}
        return all(claim in mine for claim in claims)

    async def _recorded_settle_done(self, intent: Intent) -> bool:
        oracle = OptimisticOracleV3(self.manager.pool, intent.to or self.oracle.address)
        _, args = oracle.decode_call(intent.data)
        return (await oracle.get_assertion(args["assertionId"])).settled

    async def _recorded_dispute_done(self, intent: Intent) -> bool:
        oracle = OptimisticOracleV3(self.manager.pool, intent.to or self.oracle.address)
        _, args = oracle.decode_call(intent.data)
        return not await self._disputable(oracle, args["assertionId"])

    async def _disputable(self, oracle: OptimisticOracleV3, assertion_id: str | bytes) -> bool:
        """Whether the assertion can still be disputed, by the chain's latest block time."""
        view = await oracle.get_assertion(assertion_id)
        return view.disputable(await self.chain_time())

    async def chain_time(self) -> int:
        """The latest block's time: what liveness runs on."""

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_block("latest")

        return int((await self.manager.pool.call("eth_getBlockByNumber", run))["timestamp"])

    def assertion_key(self, claim: Claim) -> str:
        """The idempotency key (and subject) of asserting `claim`."""
        where = f"{self.manager.chain_id}:{self.oracle.address.lower()}"
        return f"{ASSERT_PREFIX}{where}:{HexBytes(keccak(claim.text)).to_0x_hex()}"

    def settle_key(self, assertion_id: str) -> str:
        where = f"{self.manager.chain_id}:{self.oracle.address.lower()}"
        return f"{SETTLE_ASSERTION_PREFIX}{where}:{assertion_id.lower()}"

    def dispute_key(self, assertion_id: str) -> str:
        """The idempotency key (and subject) of our dispute of `assertion_id`."""
        where = f"{self.manager.chain_id}:{self.oracle.address.lower()}"
        return f"{DISPUTE_ASSERTION_PREFIX}{where}:{assertion_id.lower()}"

    def _calldata(self, claim: Claim) -> str:
        return self.oracle.encode(
            "assertTruth",
            claim.text,
            self.manager.address,
            ZERO_ADDRESS,  # no callback: the daemon watches the assertion itself
            ZERO_ADDRESS,  # no escalation manager: UMA's vote arbitrates
            claim.liveness,
            claim.currency,
            claim.bond,
            identifier_bytes(claim.identifier),
            NO_DOMAIN,
        )

    async def find(self, claims: Sequence[Claim]) -> dict[bytes, AssertionMade]:
        """This signer's assertions of `claims` on-chain, by claim text."""
        wanted = {claim.text for claim in claims}
        found: dict[bytes, AssertionMade] = {}
        for made in await self.oracle.assertions_by(self.manager.address, self.from_block):
            if made.claim in wanted:
                found.setdefault(made.claim, made)
        return found

    async def assert_truth(self, claim: Claim) -> Asserted:
        """Assert `claim` once: a recorded live or confirmed intent is followed to its
        end; a claim this signer already asserted is recorded as SKIPPED; otherwise the
        bond is checked, the allowance set if needed, and `assertTruth` sent."""
        (asserted,) = await self._assert([claim], self.assertion_key(claim))
        return asserted

    async def assert_many(self, claims: Sequence[Claim], batch_key: str) -> list[Asserted]:
        """Assert `claims` in one `multicall` transaction under `batch_key`, the claims'
        own keys its subjects (so no single assertion of one of them runs meanwhile).
        Claims already asserted are left out before anything is signed."""
        if not claims:
            return []
        return await self._assert(claims, ASSERT_BATCH_PREFIX + batch_key)

    async def _assert(self, claims: Sequence[Claim], key: str) -> list[Asserted]:
        intent = await self.manager.submit_once(key, lambda: self._send_assertion(claims, key))
        return await self._ended(claims, intent)

    async def _send_assertion(self, claims: Sequence[Claim], key: str) -> Intent:
        """Assert those of `claims` not yet on chain in one transaction under `key`, with
        the balance checked and the allowance held for their bonds while it is sent."""
        done_already = await self.find(claims)
        to_send = [c for c in claims if c.text not in done_already]
        # Claims on-chain already are no subjects: the intent that asserted them holds them.
        subjects = tuple(self.assertion_key(c) for c in to_send)

        async def all_done() -> bool:
            return len(await self.find(to_send)) == len(to_send)

        held = AsyncExitStack()
        if to_send:
            currency = {c.currency for c in to_send}
            if len(currency) != 1:
                raise TxError(f"{key}: the claims of one transaction share one bond currency")
            (token,) = currency
            total = sum(c.bond for c in to_send)
            await self.bonds.check_balance(key, token, total)
            await held.enter_async_context(self.bonds.allowance_for(token, total, purpose=key))
        calls = [self._calldata(c) for c in to_send]
        data = (
            calls[0]
            if len(calls) == 1
            else self.oracle.encode("multicall", [bytes(HexBytes(c)) for c in calls])
        )

        def tx(just_checked: bool) -> TxRequest:
            return TxRequest(
                key=key,
                to=self.oracle.address,
                data=data if to_send else "0x",
                already_done=all_done,
                just_checked=just_checked,
                subjects=subjects,
            )

        try:
            return await self.manager.submit_or_skip(tx(just_checked=bool(to_send)))
        finally:
            await held.aclose()  # the bond's allowance is no longer held for it

    async def _ended(self, claims: Sequence[Claim], intent: Intent) -> list[Asserted]:
        found = await self.find(claims)
        results = [Asserted(intent, found.get(c.text)) for c in claims]
        for claim, result in zip(claims, results, strict=True):
            emit(
                logger,
                logging.INFO,
                "uma.assertion",
                key=self.assertion_key(claim),
                intent=intent.key,
                state=intent.state,
                assertion=None if result.assertion is None else result.assertion.assertion_id,
            )
        return results

    async def settle(self, assertion_id: str, now: float) -> Intent | None:
        """Settle the assertion once it can be (expired, or disputed and voted on); None
        while it cannot. One settled by someone else is recorded as SKIPPED."""
        view = await self.oracle.get_assertion(assertion_id)
        state = view.state(now)
        if state in (AssertionState.NONE, AssertionState.ASSERTED):
            return None
        key = self.settle_key(assertion_id)

        async def done() -> bool:
            return (await self.oracle.get_assertion(assertion_id)).settled

        data = self.oracle.encode("settleAssertion", bytes(HexBytes(assertion_id)))
        try:
            intent = await self.manager.submit(
                TxRequest(
                    key=key,
                    to=self.oracle.address,
                    data=data,
                    already_done=done,
                    just_checked=state != AssertionState.SETTLED,
                    subjects=(key,),
                )
            )
        except TxReverted:
            # A disputed assertion reverts until the vote has a price: not yet settleable.
            if state == AssertionState.DISPUTED:
                return None
            raise
        emit(logger, logging.INFO, "uma.settle_assertion", key=key, state=intent.state)
        return intent

    async def dispute(self, assertion_id: str) -> Intent:
        """Dispute the assertion, once, naming this signer the disputer: a key that already
        has a live or confirmed intent returns it once it ended; an assertion that can no
        longer be disputed (disputed by someone else, expired, settled) is recorded as
        SKIPPED and nothing is sent; otherwise the balance is checked for the assertion's
        bond in its currency, the allowance set if needed, and `disputeAssertion` sent and
        followed until final."""
        key = self.dispute_key(assertion_id)

        async def done() -> bool:
            return not await self._disputable(self.oracle, assertion_id)

        def tx(just_checked: bool) -> TxRequest:
            return TxRequest(
                key=key,
                to=self.oracle.address,
                data=self.oracle.encode(
                    "disputeAssertion", bytes(HexBytes(assertion_id)), self.manager.address
                ),
                already_done=done,
                just_checked=just_checked,
                subjects=(key,),
            )

        async def send() -> Intent:
            view = await self.oracle.get_assertion(assertion_id)
            if not view.disputable(await self.chain_time()):
                return await self.manager.submit(tx(just_checked=False))
            await self.bonds.check_balance(key, view.currency, view.bond)
            async with self.bonds.allowance_for(view.currency, view.bond, purpose=key):
                return await self.manager.submit_or_skip(tx(just_checked=True))

        intent = await self.manager.submit_once(key, send)
        emit(
            logger,
            logging.INFO,
            "uma.dispute_assertion",
            key=key,
            state=intent.state,
            assertion=assertion_id,
        )
        return intent
