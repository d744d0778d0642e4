"""UMA's Optimistic Oracle V2 as the chain layer sees it: price requests, their state,
proposals and settlement.

A request is keyed by (requester, identifier, timestamp, ancillary data) (`RequestKey`);
its id on the contract is `keccak256(abi.encodePacked(requester, identifier, timestamp,
ancillaryData))`. Its state (`RequestState`) is the contract's `getState`:

    INVALID -requestPrice-> REQUESTED -proposePrice-> PROPOSED -liveness over-> EXPIRED
    PROPOSED -disputePrice-> DISPUTED -the vote's price-> RESOLVED
    EXPIRED or RESOLVED -settle-> SETTLED

* `OptimisticOracleV2`: typed reads (`get_request`, `get_requests`: `getRequest` and
  `getState` in one JSON-RPC batch each; `has_price`) and calldata.
* `RequestSource`: `RequestPrice` events of the configured requesters (an indexed topic,
  filtered by the node) and identifiers (filtered here), through `LogScanner`
  (confirmation depth, persisted checkpoint, reorg rewind), delivered once per request id.
* `UmaProposer`: `proposePrice` through the `TxManager`, one intent per request under the
  key `uma-propose:<chain id>:<oracle>:<request id>` with that key as its subject. The
  pre-send check is "the request is no longer REQUESTED": a request someone else
  proposed first is recorded as a SKIPPED intent and reported with their proposer and
  price, never sent (so never a reverted transaction). The bond currency's allowance is
  set only when a bond needs it, to exactly what it needs unless a larger standing
  `allowance` is configured (never unlimited by default), and the signer's balance is
  checked against bond + final fee before anything is sent (`BondShortfall`):
  `BondAccount`, which the OOv3 asserter (`oracle.venues.uma.binding_v3`) shares.
* UMA's ManagedOptimisticOracleV2 (UMIP-189; `UmaProposer(..., managed=...)`): before any
  approval or signature, the request's effective proposer whitelist is read
  (`getProposerWhitelistWithEnabledStatus`); off it, `NotWhitelisted` and nothing is sent.
  The bond charged is the request manager's custom bond when set (`customBonds`), which
  `getRequest` does not show before the proposal. A proposal past its liveness stays
  disputable until the resolver role settles it; only the resolver settles.
  `settle` settles an EXPIRED or RESOLVED request, once.
  `dispute` disputes another's proposal (`disputePrice`), once, under the key
  `uma-dispute:<chain id>:<oracle>:<request id>`: the pre-send check is "the request is no
  longer PROPOSED" (disputed by someone else, expired, settled: recorded as SKIPPED, never
  a reverted transaction); the bond account pays bond + final fee as for a proposal.

The contracts are UMA's own, compiled from `@uma/core` (`contracts/scripts/build-uma.js`)
into `oracle/chain/artifacts/uma/`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from typing import Any

from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.checkpoint import CheckpointStore
from oracle.chain.contracts import _Contract, load_artifact
from oracle.chain.erc20 import TESTNET_ERC20, Erc20
from oracle.chain.events import DecodedLog, EventDecoder, address_topic
from oracle.chain.intents import Intent, IntentState
from oracle.chain.revert import unless_reverted
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import LogScanner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.core.ancillary import TOO_EARLY_PRICE, AncillaryQuestion, parse_ancillary
from oracle.core.bonds import ManagedTerms, allowance_to_approve, to_units
from oracle.errors import (
    BondShortfall,
    ChainError,
    NotWhitelisted,
    TxError,
)
from oracle.log import emit

logger = logging.getLogger(__name__)

OPTIMISTIC_ORACLE_V2 = "uma/OptimisticOracleV2"
OPTIMISTIC_ORACLE_V3 = "uma/OptimisticOracleV3"
FINDER = "uma/Finder"
STORE = "uma/Store"
IDENTIFIER_WHITELIST = "uma/IdentifierWhitelist"
ADDRESS_WHITELIST = "uma/AddressWhitelist"
MOCK_ORACLE_ANCILLARY = "uma/MockOracleAncillary"
# UMA's ManagedOptimisticOracleV2 (UMIP-189) is read and called through the ABI of this
# project's test double of it (contracts/src/testing/), which keeps its function
# signatures, events and custom errors; so is its proposer whitelist.
MANAGED_OPTIMISTIC_ORACLE_V2 = "ManagedOptimisticOracleV2Double"
MANAGED_PROPOSER_WHITELIST = "ManagedProposerWhitelist"
UMA_CONTRACTS = (
    OPTIMISTIC_ORACLE_V2,
    OPTIMISTIC_ORACLE_V3,
    FINDER,
    STORE,
    IDENTIFIER_WHITELIST,
    ADDRESS_WHITELIST,
    TESTNET_ERC20,
    MOCK_ORACLE_ANCILLARY,
)
YES_OR_NO_QUERY = "YES_OR_NO_QUERY"
REQUEST_EVENT = "RequestPrice"
MAX_UINT256 = 2**256 - 1
INT256_MIN, INT256_MAX = -(2**255), 2**255 - 1
ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
PROPOSE_PREFIX = "uma-propose:"
SETTLE_PREFIX = "uma-settle:"
APPROVE_PREFIX = "uma-approve:"
DISPUTE_PREFIX = "uma-dispute:"


def identifier_bytes(name: str) -> bytes:
    """A price identifier as the contracts hold it: ASCII, right-padded to 32 bytes."""
    raw = name.encode("ascii")
    if not raw or len(raw) > 32:
        raise ValueError(f"identifier {name!r}: 1 to 32 ASCII characters")
    return raw.ljust(32, b"\0")


def identifier_name(raw: bytes) -> str:
    """The readable name of a bytes32 identifier (`YES_OR_NO_QUERY`)."""
    return bytes(raw).rstrip(b"\0").decode("ascii", errors="replace")


class RequestState(IntEnum):
    """`OptimisticOracleV2Interface.State`."""

    INVALID = 0  # never requested
    REQUESTED = 1
    PROPOSED = 2  # liveness running
    EXPIRED = 3  # proposed, not disputed, liveness over: settleable
    DISPUTED = 4  # waiting for the vote
    RESOLVED = 5  # the vote has a price: settleable
    SETTLED = 6


@dataclass(frozen=True)
class RequestKey:
    """What identifies a price request on the oracle."""

    requester: str
    identifier: bytes
    timestamp: int
    ancillary_data: bytes

    def __post_init__(self) -> None:
        object.__setattr__(self, "requester", to_checksum_address(self.requester))
        object.__setattr__(self, "identifier", bytes(self.identifier))
        object.__setattr__(self, "ancillary_data", bytes(self.ancillary_data))
        if len(self.identifier) != 32:
            raise ValueError("identifier: expected 32 bytes")
        if not 0 <= self.timestamp <= MAX_UINT256:
            raise ValueError("timestamp: expected a uint256")

    @property
    def args(self) -> tuple[str, bytes, int, bytes]:
        """The arguments every per-request function of the oracle takes, in order."""
        return (self.requester, self.identifier, self.timestamp, self.ancillary_data)

    @property
    def request_id(self) -> bytes:
        """`keccak256(abi.encodePacked(requester, identifier, timestamp, ancillaryData))`."""
        packed = (
            bytes(HexBytes(self.requester))
            + self.identifier
            + self.timestamp.to_bytes(32, "big")
            + self.ancillary_data
        )
        return keccak(packed)

    @property
    def id_hex(self) -> str:
        return HexBytes(self.request_id).to_0x_hex()

    @property
    def identifier_name(self) -> str:
        return identifier_name(self.identifier)

    def question(self) -> AncillaryQuestion:
        """The ancillary data read as a question (`AncillaryDataError` when it cannot be)."""
        return parse_ancillary(self.ancillary_data)


@dataclass(frozen=True)
class RequestView:
    """A request as `getRequest` and `getState` show it."""

    state: RequestState
    proposer: str
    disputer: str
    currency: str
    settled: bool
    event_based: bool
    refund_on_dispute: bool
    bond: int
    custom_liveness: int
    proposed_price: int
    resolved_price: int
    expiration_time: int
    reward: int
    final_fee: int

    @property
    def total_bond(self) -> int:
        """What a proposer (or disputer) pays in: the bond plus the final fee."""
        return self.bond + self.final_fee

    @property
    def proposed(self) -> bool:
        return self.proposer != ZERO_ADDRESS


def _request_view(state: int, request: tuple[Any, ...]) -> RequestView:
    settings = request[4]
    return RequestView(
        state=RequestState(state),
        proposer=to_checksum_address(request[0]),
        disputer=to_checksum_address(request[1]),
        currency=to_checksum_address(request[2]),
        settled=bool(request[3]),
        event_based=bool(settings[0]),
        refund_on_dispute=bool(settings[1]),
        bond=int(settings[5]),
        custom_liveness=int(settings[6]),
        proposed_price=int(request[5]),
        resolved_price=int(request[6]),
        expiration_time=int(request[7]),
        reward=int(request[8]),
        final_fee=int(request[9]),
    )


class OptimisticOracleV2(_Contract):
    artifact_name = OPTIMISTIC_ORACLE_V2

    async def get_request(self, key: RequestKey) -> RequestView:
        (view,) = await self.get_requests([key])
        return view

    async def get_requests(self, keys: Sequence[RequestKey]) -> list[RequestView]:
        """The requests `keys`, in order: their `getRequest` and `getState`, each read for
        all keys in one JSON-RPC batch request."""
        if not keys:
            return []
        args = [key.args for key in keys]
        requests, states = await asyncio.gather(
            self.read_many("getRequest", args), self.read_many("getState", args)
        )
        return [_request_view(s, r) for s, r in zip(states, requests, strict=True)]

    async def get_state(self, key: RequestKey) -> RequestState:
        return RequestState(await self.read("getState", *key.args))

    async def has_price(self, key: RequestKey) -> bool:
        return bool(await self.read("hasPrice", *key.args))

    async def default_liveness(self) -> int:
        return int(await self.read("defaultLiveness"))

    def called_request(self, data: str) -> tuple[str, RequestKey]:
        """(function, request key) of calldata for a per-request function of the oracle."""
        function, args = self.decode_call(data)
        key = RequestKey(
            args["requester"], args["identifier"], args["timestamp"], args["ancillaryData"]
        )
        return function, key


class ManagedOptimisticOracleV2(_Contract):
    """The reads of UMA's ManagedOptimisticOracleV2 beyond OOv2's: the effective proposer
    whitelist of a request and the bond and liveness its request manager set. Its
    settings are keyed by `getManagedRequestId` (requester, identifier, ancillary data: no
    timestamp), so they may be set before the request is asked."""

    artifact_name = MANAGED_OPTIMISTIC_ORACLE_V2

    async def is_managed(self) -> bool:
        """Whether the contract at this address answers as a managed oracle (its
        `defaultProposerWhitelist`); a plain OOv2 reverts the call."""
        return await unless_reverted(self.read("defaultProposerWhitelist")) is not None

    async def default_whitelist(self) -> tuple[str, tuple[str, ...], bool]:
        """(address, members, enabled) of the default proposer whitelist."""
        address = to_checksum_address(await self.read("defaultProposerWhitelist"))
        whitelist = _Whitelist(self.pool, address)
        members, enabled = await asyncio.gather(
            whitelist.read("getWhitelist"), whitelist.read("isWhitelistEnabled")
        )
        return address, tuple(to_checksum_address(m) for m in members), bool(enabled)

    async def terms(self, key: RequestKey, currency: str) -> ManagedTerms:
        """What the oracle will apply to a proposal on `key` made now (`ManagedTerms`)."""
        args = (key.requester, key.identifier, key.ancillary_data)
        managed_id = await self.read("getManagedRequestId", *args)
        listed, bond, liveness = await asyncio.gather(
            self.read("getProposerWhitelistWithEnabledStatus", *args),
            self.read("customBonds", managed_id, to_checksum_address(currency)),
            self.read("customLivenessValues", managed_id),
        )
        members, enabled = listed
        return ManagedTerms(
            allowed=tuple(to_checksum_address(m) for m in members),
            enabled=bool(enabled),
            custom_bond=int(bond[0]),
            custom_liveness=int(liveness[0]),
        )


class _Whitelist(_Contract):
    artifact_name = MANAGED_PROPOSER_WHITELIST


# --- discovery ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceRequest:
    """One `RequestPrice` event."""

    key: RequestKey
    currency: str
    reward: int
    final_fee: int
    block_number: int
    tx_hash: str
    log_index: int

    @classmethod
    def from_log(cls, log: DecodedLog) -> PriceRequest:
        args = log.args
        return cls(
            key=RequestKey(
                args["requester"], args["identifier"], args["timestamp"], args["ancillaryData"]
            ),
            currency=to_checksum_address(args["currency"]),
            reward=int(args["reward"]),
            final_fee=int(args["finalFee"]),
            block_number=log.block_number,
            tx_hash=log.tx_hash,
            log_index=log.log_index,
        )


def _request_id_of(log: DecodedLog) -> str:
    return PriceRequest.from_log(log).key.id_hex


class RequestSource:
    """The price requests asked on an OOv2 by `requesters` (None: anyone) for
    `identifiers`, from its `RequestPrice` events (see `LogScanner`)."""

    def __init__(
        self,
        pool: RpcPool,
        oracle_address: str,
        checkpoints: CheckpointStore,
        settings: ScannerSettings | None = None,
        *,
        requesters: Sequence[str] | None = None,
        identifiers: Sequence[str] = (YES_OR_NO_QUERY,),
        start_block: int = 0,
        name: str = "uma-requests",
    ) -> None:
        if requesters is not None and not requesters:
            raise ValueError("requesters: name at least one, or None for anyone")
        self.requesters = (
            None if requesters is None else frozenset(to_checksum_address(r) for r in requesters)
        )
        self.identifiers = frozenset(identifier_bytes(i) for i in identifiers)
        decoder = EventDecoder(load_artifact(OPTIMISTIC_ORACLE_V2).abi, REQUEST_EVENT)
        topics = [] if requesters is None else [[address_topic(r) for r in requesters]]
        self.scanner = LogScanner(
            pool,
            address=to_checksum_address(oracle_address),
            decoder=decoder,
            checkpoints=checkpoints,
            name=name,
            settings=settings,
            start_block=start_block,
            id_of=_request_id_of,
            topics=topics,
        )

    def _wanted(self, request: PriceRequest) -> bool:
        if self.requesters is not None and request.key.requester not in self.requesters:
            return False
        return request.key.identifier in self.identifiers

    async def poll(
        self, handler: Callable[[list[PriceRequest]], Awaitable[None]] | None = None
    ) -> list[PriceRequest]:
        """New requests since the last poll; `handler` runs before the checkpoint moves."""
        return await self.scanner.poll_parsed(PriceRequest.from_log, handler, self._wanted)


# --- proposing and settling -----------------------------------------------------------------


@dataclass(frozen=True)
class Proposal:
    """How proposing on a request ended: `intent` is the proposal's (CONFIRMED: ours is
    on-chain; SKIPPED: the request was no longer open when we would have sent it, recorded
    and never sent; another signer's when a replica carries it), `request` the request as
    read afterwards."""

    intent: Intent | None
    request: RequestView

    def ours(self, address: str) -> bool:
        return self.request.proposer.lower() == address.lower()


def _int256(price: int) -> int:
    if not INT256_MIN <= price <= INT256_MAX:
        raise ValueError("price: expected an int256")
    return price


class BondAccount:
    """The signer's bond currency towards one spender (an oracle that pulls bonds): the
    balance checked before a bond is posted, and the allowance set only when a bond needs
    it (`allowance_for`): to exactly what it needs (`oracle.core.bonds.allowance_to_approve`),
    or to a larger standing `allowance` (in the currency's smallest unit, one amount or per
    token) when configured. Never unlimited unless configured so."""

    def __init__(
        self,
        manager: TxManager,
        spender: str,
        *,
        allowance: int | Callable[[str], Awaitable[int | None]] | None = None,
    ):
        if isinstance(allowance, int) and not 0 < allowance <= MAX_UINT256:
            raise ValueError("allowance: a positive uint256, or None for exactly what is needed")
        self.manager = manager
        self.spender = to_checksum_address(spender)
        self._allowance = allowance
        # One bond of a token at a time: approval, then the bond, followed to its end.
        self._locks: dict[str, asyncio.Lock] = {}

    async def configured(self, token: str) -> int | None:
        """The standing allowance configured for `token` (None: exactly each bond's need)."""
        if self._allowance is None or isinstance(self._allowance, int):
            return self._allowance
        return await self._allowance(token)

    @asynccontextmanager
    async def allowance_for(
        self,
        token: str,
        needed: int,
        *,
        purpose: str,
        recheck: Callable[[], Awaitable[object]] | None = None,
    ) -> AsyncIterator[Intent | None]:
        """While the block runs (it sends the bond of intent `purpose` and follows it to
        its end), the spender may take `needed` of `token`: approved now unless the
        allowance covers it (the approval intent, else None). Bonds of one token go one at
        a time through here, so one never takes the allowance another was given, nor
        changes an allowance slot between an approval's gas estimate and its inclusion.
        `recheck` runs first, inside that turn (a venue's risk guard, weighing the bonds
        sent meanwhile): a bond it refuses gets no approval."""
        token = to_checksum_address(token)
        async with self._locks.setdefault(token, asyncio.Lock()):
            if recheck is not None:
                await recheck()
            yield await self._approve(token, needed, purpose)

    async def _approve(self, token: str, needed: int, purpose: str) -> Intent | None:
        """Approve the spender for `needed` (or the standing allowance) unless its
        allowance covers it (None: nothing was sent). One approval intent per bond (its
        key names the bond's intent by a hash of its key), so a crash or a second replica
        never approves twice for one bond."""
        erc20 = Erc20(self.manager.pool, token)
        configured = await self.configured(erc20.address)
        amount = allowance_to_approve(
            await erc20.allowance(self.manager.address, self.spender), needed, configured
        )
        if amount is None:
            return None

        async def enough() -> bool:
            return await erc20.allowance(self.manager.address, self.spender) >= needed

        tag = keccak(text=purpose)[:8].hex()
        base = (
            f"{APPROVE_PREFIX}{self.manager.chain_id}:{erc20.address.lower()}:"
            f"{self.spender.lower()}:{tag}"
        )
        attempt = 0
        while True:  # the first approval for this bond not yet used up
            key = f"{base}:{attempt}"
            recorded = await self.manager.carrier(key)
            if recorded is None:
                break
            if not recorded.final:
                recorded = await self.manager.wait(key)
                if await enough():
                    return recorded
            attempt += 1
        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=erc20.address,
                data=erc20.encode("approve", self.spender, amount),
                already_done=enough,
            )
        )
        if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
            raise TxError(f"{key}: the approval ended {intent.state.value}: {intent.error}")
        emit(
            logger,
            logging.INFO,
            "uma.allowance",
            key=key,
            bond=purpose,
            token=erc20.address,
            spender=self.spender,
            amount=amount,
            needed=needed,
            state=intent.state,
        )
        return intent

    async def check_balance(self, key: str, token: str, needed: int) -> int:
        """The signer's balance of `token`; `BondShortfall` when it is below `needed`."""
        balance = await Erc20(self.manager.pool, token).balance_of(self.manager.address)
        if balance < needed:
            emit(
                logger,
                logging.WARNING,
                "uma.bond_shortfall",
                key=key,
                token=token,
                needed=needed,
                balance=balance,
            )
            raise BondShortfall(key, to_checksum_address(token), needed, balance)
        return balance


class UmaProposer:
    """Proposes prices on an OOv2 and settles them, through one `TxManager`."""

    def __init__(
        self,
        manager: TxManager,
        oracle: OptimisticOracleV2,
        *,
        allowance: int | Callable[[str], Awaitable[int | None]] | None = None,
        allow_too_early: bool = False,
        managed: ManagedOptimisticOracleV2 | None = None,
    ) -> None:
        self.manager = manager
        self.oracle = oracle
        self.bonds = BondAccount(manager, oracle.address, allowance=allowance)
        self.allow_too_early = allow_too_early
        # UMA's managed oracle (UMIP-189): its whitelist and request manager's bond are read
        # before anything is approved or signed; disputes stay open until the resolver
        # settles (an EXPIRED request is still disputable).
        self.managed = managed
        self.disputable = (
            (RequestState.PROPOSED,)
            if managed is None
            else (RequestState.PROPOSED, RequestState.EXPIRED)
        )
        # For intents found in the store after a restart (no request callback at hand).
        manager.register_precheck(
            PROPOSE_PREFIX, self._recorded_proposal_done, contract=oracle.address
        )
        manager.register_precheck(
            SETTLE_PREFIX, self._recorded_settle_done, contract=oracle.address
        )
        manager.register_precheck(
            DISPUTE_PREFIX, self._recorded_dispute_done, contract=oracle.address
        )

    # -- keys -------------------------------------------------------------------------------

    def _key(self, prefix: str, request: RequestKey) -> str:
        where = f"{self.manager.chain_id}:{self.oracle.address.lower()}"
        return f"{prefix}{where}:{request.id_hex}"

    def proposal_key(self, request: RequestKey) -> str:
        """The idempotency key (and subject) of the proposal for `request`."""
        return self._key(PROPOSE_PREFIX, request)

    def settle_key(self, request: RequestKey) -> str:
        return self._key(SETTLE_PREFIX, request)

    def dispute_key(self, request: RequestKey) -> str:
        """The idempotency key (and subject) of our dispute of `request`."""
        return self._key(DISPUTE_PREFIX, request)

    # -- pre-send checks --------------------------------------------------------------------

    async def _not_requested(self, request: RequestKey) -> bool:
        return await self.oracle.get_state(request) != RequestState.REQUESTED

    def _recorded(self, intent: Intent) -> tuple[OptimisticOracleV2, RequestKey]:
        """The oracle a recorded intent calls (its `to`: one manager may serve several
        oracles, the check is registered once per prefix) and the request it names."""
        oracle = OptimisticOracleV2(self.manager.pool, intent.to or self.oracle.address)
        return oracle, oracle.called_request(intent.data)[1]

    async def _recorded_proposal_done(self, intent: Intent) -> bool:
        oracle, request = self._recorded(intent)
        return await oracle.get_state(request) != RequestState.REQUESTED

    async def _recorded_settle_done(self, intent: Intent) -> bool:
        oracle, request = self._recorded(intent)
        return await oracle.get_state(request) == RequestState.SETTLED

    async def _recorded_dispute_done(self, intent: Intent) -> bool:
        oracle, request = self._recorded(intent)
        return await oracle.get_state(request) not in self.disputable

    # -- the managed oracle -------------------------------------------------------------------

    async def terms(self, request: RequestKey, view: RequestView) -> ManagedTerms | None:
        """What the managed oracle will apply to our proposal on `request` (None: a plain
        OOv2, whose `getRequest` shows the whole bond)."""
        if self.managed is None:
            return None
        return await self.managed.terms(request, view.currency)

    async def charged(self, request: RequestKey, view: RequestView, key: str) -> int:
        """Bond + final fee a proposal on `request` pulls from the signer, as the oracle will
        apply it; NotWhitelisted (nothing approved or sent) when a managed oracle would
        refuse the signer."""
        terms = await self.terms(request, view)
        if terms is None:
            return view.total_bond
        if not terms.may_propose(self.manager.address):
            emit(
                logger,
                logging.WARNING,
                "uma.not_whitelisted",
                key=key,
                signer=self.manager.address,
                oracle=self.oracle.address,
                request=request.id_hex,
                whitelist_size=len(terms.allowed),
            )
            raise NotWhitelisted(key, self.manager.address, self.oracle.address, request.id_hex)
        return terms.charged_bond(view.bond) + view.final_fee

    # -- proposals --------------------------------------------------------------------------

    async def propose(
        self,
        request: RequestKey,
        price: int,
        *,
        recheck: Callable[[], Awaitable[object]] | None = None,
    ) -> Proposal:
        """Propose `price` for `request`, once: a key that already has a live or confirmed
        intent returns it (ours: once it ended); a request no longer REQUESTED is recorded
        as SKIPPED and nothing is sent; otherwise the balance is checked, the allowance set
        if needed, and `proposePrice` sent and followed until final."""
        _int256(price)
        if price == TOO_EARLY_PRICE and not self.allow_too_early:
            raise TxError(
                f"{request.id_hex}: UMA's too-early price is never proposed unless allowed"
            )
        key = self.proposal_key(request)
        data = self.oracle.encode("proposePrice", *request.args, price)

        async def done() -> bool:
            return await self._not_requested(request)

        intent = await self.manager.submit_once(
            key,
            lambda: self._send_bonded(
                request, RequestState.REQUESTED, key, data, done, recheck=recheck
            ),
        )
        return await self._ended(request, intent)

    async def _send_bonded(
        self,
        request: RequestKey,
        open_state: RequestState,
        key: str,
        data: bytes | str,
        done: Callable[[], Awaitable[bool]],
        *,
        recheck: Callable[[], Awaitable[object]] | None = None,
    ) -> Intent:
        """Send `data` (a proposal or a dispute: a call that posts a bond) for `request`
        while it is in `open_state`, with the balance checked and the allowance set first.
        A request no longer open (moved on by someone else, or by us with the intent lost)
        is recorded as skipped by the pre-send check; nothing is signed or sent."""

        def tx(just_checked: bool) -> TxRequest:
            return TxRequest(
                key=key,
                to=self.oracle.address,
                data=data,
                already_done=done,
                just_checked=just_checked,
                subjects=(key,),
            )

        view = await self.oracle.get_request(request)
        open_states = (open_state,) if open_state == RequestState.REQUESTED else self.disputable
        if view.state not in open_states:
            return await self.manager.submit(tx(just_checked=False))
        # A proposal's charge is the managed oracle's (its whitelist checked first); a
        # dispute's is the bond fixed when the price was proposed.
        needed = (
            await self.charged(request, view, key)
            if open_state == RequestState.REQUESTED
            else view.total_bond
        )
        await self.bonds.check_balance(key, view.currency, needed)
        async with self.bonds.allowance_for(view.currency, needed, purpose=key, recheck=recheck):
            return await self.manager.submit_or_skip(tx(just_checked=True))

    async def _ended(self, request: RequestKey, intent: Intent) -> Proposal:
        """The proposal `intent` (ours: ended) made, with the request as it now stands."""
        view = await self.oracle.get_request(request)
        proposal = Proposal(intent, view)
        ours = proposal.ours(self.manager.address)
        emit(
            logger,
            logging.INFO,
            "uma.proposal" if ours or not view.proposed else "uma.proposed_by_other",
            key=intent.key,
            state=intent.state,
            request=request.id_hex,
            proposer=view.proposer,
            price=view.proposed_price if view.proposed else None,
        )
        return proposal

    # -- settlement -------------------------------------------------------------------------

    async def settle(self, request: RequestKey) -> Intent | None:
        """Settle `request` once its price is final (EXPIRED or RESOLVED); None while it is
        not settleable. A request settled by someone else is recorded as SKIPPED."""
        state = await self.oracle.get_state(request)
        key = self.settle_key(request)
        if state not in (RequestState.EXPIRED, RequestState.RESOLVED, RequestState.SETTLED):
            return None

        async def done() -> bool:
            return await self.oracle.get_state(request) == RequestState.SETTLED

        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=self.oracle.address,
                data=self.oracle.encode("settle", *request.args),
                already_done=done,
                just_checked=state != RequestState.SETTLED,
                subjects=(key,),
            )
        )
        emit(logger, logging.INFO, "uma.settle", key=key, state=intent.state)
        return intent

    # -- disputes ---------------------------------------------------------------------------

    async def dispute(self, request: RequestKey) -> Intent:
        """Dispute the price proposed on `request`, once: a key that already has a live or
        confirmed intent returns it once it ended; a request no longer PROPOSED (disputed
        by someone else, expired, settled) is recorded as SKIPPED and nothing is sent;
        otherwise the balance is checked, the allowance set if needed, and `disputePrice`
        sent and followed until final."""
        key = self.dispute_key(request)

        async def done() -> bool:
            return await self.oracle.get_state(request) not in self.disputable

        data = self.oracle.encode("disputePrice", *request.args)
        intent = await self.manager.submit_once(
            key, lambda: self._send_bonded(request, RequestState.PROPOSED, key, data, done)
        )
        emit(
            logger,
            logging.INFO,
            "uma.dispute",
            key=key,
            state=intent.state,
            request=request.id_hex,
        )
        return intent


# --- set-up helpers (the composition root's) ----------------------------------------------


def standing_allowance(
    pool: RpcPool, amount: Decimal | None
) -> Callable[[str], Awaitable[int | None]] | None:
    """A configured standing allowance (in whole units of each bond currency) as
    `BondAccount` takes it: per token, in its smallest unit (None: exactly each bond's)."""
    if amount is None:
        return None

    async def in_units(token: str) -> int | None:
        decimals = int(await Erc20(pool, token).read("decimals"))
        return to_units(amount, decimals)

    return in_units


async def report_whitelist(managed: ManagedOptimisticOracleV2, signer: str) -> bool | None:
    """One log line at start: whether `signer` may propose on the managed oracle's default
    proposer whitelist (a request manager may set another per request; each request is
    read again before its bond). Never fatal: None when it cannot be read now."""
    try:
        address, members, enabled = await managed.default_whitelist()
    except ChainError as error:
        emit(
            logger,
            logging.WARNING,
            "uma.proposer_whitelist_unreadable",
            signer=signer,
            oracle=managed.address,
            error=error,
        )
        return None
    may = ManagedTerms(members, enabled).may_propose(signer)
    emit(
        logger,
        logging.INFO if may else logging.WARNING,
        "uma.proposer_whitelist",
        signer=signer,
        oracle=managed.address,
        whitelist=address,
        enabled=enabled,
        may_propose=may,
    )
    return may
