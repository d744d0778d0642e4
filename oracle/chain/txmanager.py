"""TxManager: gets transactions of one signer on-chain exactly once, whatever happens.

    manager = TxManager(pool, signer, store, settings.chain.tx, decoder=ErrorDecoder(abi))
    await manager.recover()                       # finish what a previous process left
    intent = await manager.submit(TxRequest(key="propose:0x..", to=oracle, data=calldata,
                                            already_done=question_has_our_proposal))
    intent.state  # CONFIRMED, REVERTED (intent.error_name == "QuestionExists"), SKIPPED, FAILED

How (see docs/chain.md for the long version):

* Idempotency: `submit` with a key that already has an intent resumes or returns it;
  a new intent first runs the request's pre-send check (`already_done`) and is skipped
  when the action is already on-chain (unless the caller says it `just_checked`).
  `submit_once` is the step every venue action takes: the intent that carries the action
  (recorded under its key, or holding its subjects, of any replica), else a new one.
* Subjects: a request names what it acts on (`subjects`); while another intent holds one
  of them (unfinished, or confirmed: `holders`), nothing is signed and `SubjectsHeld`
  names the holder. The store checks again atomically when it records the new intent, so
  the same action is never in two transactions, whatever other keys, processes or
  replicas do. An intent of another signer is never driven by this manager; `relay`
  only broadcasts its signed transaction again.
* Gas: estimated (a revert there raises `TxReverted` with the decoded custom error and
  nothing is sent), times `gas_limit_multiplier`, at most `max_gas_limit`.
* Fees: from `eth_feeHistory` (`oracle.chain.fees`). While the next base fee plus the
  tip is above `max_fee_per_gas_gwei`, nothing is signed and `tx.fee_above_cap` is
  logged; the transaction waits instead of overpaying.
* Nonces: planned under a lock from the node's pending count and the store's unfinished
  intents (`oracle.chain.nonces`), so concurrent submissions never collide; "nonce too
  low" resyncs and re-signs.
* Record, then broadcast: the signed transaction is `put` into the `IntentStore` before
  it is sent, and every replacement is recorded before it is sent.
* Resumed before its first broadcast (recorded, then the process died): if the node
  neither knows nor mined it, the pre-send check runs again before it is sent.
* Bonds: a caller registers the bonds a key's transaction posts (`bonded(key, holds)`);
  the store reserves them when it records the intent, in the same write, against the
  signer's one bond budget (`oracle.chain.intents`, `oracle.core.budget`), or raises
  `BondRefused` and nothing is sent. `scan_bonds` hands the ledger a venue's scan of its
  bonds on chain, which releases the confirmed reservations it counts.
* Monitoring, once per `poll_interval`: a receipt in a canonical block -> MINED, and at
  `confirmations` deep -> CONFIRMED, or REVERTED with the revert decoded; a receipt whose
  block left the chain (reorg) -> back to BROADCAST and sent again; a transaction the
  node no longer knows (dropped) -> sent again; not mined after `resend_after_blocks` ->
  replaced with fees bumped by `fee_bump_percent` (at least the market's), never above
  the cap (`tx.fee_cap_reached` is logged and it waits); nonces below ours that nothing
  will fill (a gap) -> filled with zero-value self-transfers; our nonce used by a
  transaction we never signed -> the pre-send check runs again, then a fresh nonce.
* Which of these applies is chosen by `oracle.core.intents.decide` (pure) from what a poll
  has read; every change of state goes through that module's transition table.
* Each replacement is reported to the manager's observer (`oracle.chain.observer`; the
  daemon counts them), and `balance()` reads what the signer has left to pay fees with.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal

from eth_typing import ChecksumAddress
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from web3.exceptions import BlockNotFound, TransactionNotFound, Web3RPCError

from oracle.chain.fees import FeeChoice, Fees, bump_fees, choose_fees, fee_policy, gas_limit
from oracle.chain.intents import (
    Attempt,
    BondBook,
    BondHold,
    BondLedger,
    Inclusion,
    Intent,
    IntentStore,
)
from oracle.chain.keys import Signer
from oracle.chain.nonces import NonceBook, plan_nonce
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.revert import DecodedError, ErrorDecoder, is_revert, revert_data
from oracle.chain.rpc import RpcPool, Web3, describe_failure, is_node_failure, rpc_error_message
from oracle.chain.settings import TxSettings
from oracle.core.intents import (
    TERMINAL_STATES,
    Action,
    Do,
    IntentEvent,
    IntentState,
    Look,
    Observation,
    Receipt,
    SendAnswer,
    after_resend,
    decide,
    nonce_taken_settled,
    transition,
)
from oracle.errors import (
    BondRefused,
    ChainError,
    RpcUnavailable,
    SubjectsHeld,
    TxError,
    TxReverted,
)
from oracle.log import emit

logger = logging.getLogger(__name__)

Precheck = Callable[[], Awaitable[bool]]
IntentCheck = Callable[[Intent], Awaitable[bool]]
NONCE_FILL_PREFIX = "nonce-fill:"
PLAIN_TRANSFER_GAS = 21_000
_FEE_LOG_EVERY = 10  # polls between repeated "waiting for fees" events

_ALREADY_KNOWN = ("already known", "already imported", "known transaction", "alreadyknown")
_NONCE_TOO_LOW = ("nonce too low", "nonce has already been used", "oldnonce")
_UNDERPRICED = ("underpriced", "fee too low", "less than block base fee", "feecap")


@dataclass(frozen=True)
class TxRequest:
    """One logical action. `key` makes it idempotent; `to=None` deploys `data`.

    `just_checked`: the caller read the chain a moment ago and found the action not done,
    so a new intent does not run `already_done` again at once (the same reads twice). It
    still runs whenever our nonce is taken by another transaction, and intents resumed
    after a restart use the check registered for their key's prefix. Between that read and
    the send, the gas estimate still simulates the call against the latest state: an
    action done meanwhile reverts there (`TxReverted`), and nothing is sent.
    """

    key: str
    to: str | None
    data: bytes | str = b""
    value: int = 0
    gas_limit: int | None = None
    already_done: Precheck | None = None
    just_checked: bool = False
    subjects: tuple[str, ...] = ()

    @property
    def data_hex(self) -> str:
        return HexBytes(self.data).to_0x_hex() if self.data else "0x"


def _gwei(wei: int) -> float:
    return round(wei / 10**9, 4)


class TxManager:
    """Sends and follows the transactions of one signer on one chain (one manager each)."""

    def __init__(
        self,
        pool: RpcPool,
        signer: Signer,
        store: IntentStore,
        settings: TxSettings | None = None,
        *,
        decoder: ErrorDecoder | None = None,
        clock: Callable[[], float] = time.time,
        observer: ChainObserver = SILENT,
    ) -> None:
        self._pool = pool
        self._signer = signer
        self._store = store
        self._settings = settings or TxSettings()
        self._policy = fee_policy(self._settings)
        self._decoder = decoder or ErrorDecoder()
        self._clock = clock
        self._observer = observer
        self._book = NonceBook()
        self._nonce_lock = asyncio.Lock()
        self._key_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: dict[str, asyncio.Task[Intent]] = {}
        self._prechecks: dict[str, Precheck] = {}
        self._prefix_checks: dict[tuple[str, str | None], IntentCheck] = {}
        self._cap_logged_at: dict[str, int] = {}
        self._dropped_logged: dict[str, str] = {}
        self._consumed_seen: dict[str, tuple[int, float]] = {}
        self._holds: dict[str, tuple[BondHold, ...]] = {}
        self._scan_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def __repr__(self) -> str:
        return f"TxManager({self._signer.address})"

    @property
    def address(self) -> ChecksumAddress:
        return self._signer.address

    @property
    def pool(self) -> RpcPool:
        return self._pool

    @property
    def chain_id(self) -> int:
        return self._pool.chain_id

    # -- public API -------------------------------------------------------------------------

    def register_precheck(
        self, prefix: str, check: IntentCheck, *, contract: str | None = None
    ) -> None:
        """The pre-send check for recorded intents whose key starts with `prefix`.

        Used when a request's own `already_done` is not at hand, i.e. for intents found in
        the store after a restart; register before `recover()`. With `contract`, only for
        intents sent to that address: venues sharing the manager (one signer on one chain,
        several deployments of a contract) each check their own intents.
        """
        self._prefix_checks[(prefix, None if contract is None else contract.lower())] = check

    @contextmanager
    def bonded(self, key: str, holds: Sequence[BondHold]) -> Iterator[None]:
        """While the block runs, a new intent under `key` (or naming `key` among its
        subjects: a batch) is recorded with `holds`: the store reserves those bonds in the
        same write, or raises `BondRefused`."""
        self._holds[key] = tuple(holds)
        try:
            yield
        finally:
            self._holds.pop(key, None)

    async def scan_bonds(
        self, scope: str, scan: Callable[[], Awaitable[Mapping[str, int]]]
    ) -> BondBook:
        """Run a venue's `scan` of its bonds on chain (by currency) and hand it to the
        bond ledger as `scope`'s figure: the book after it. Without a ledger (a store
        that keeps none), the scan alone. Scans of one scope run one at a time."""
        store = self._store
        async with self._scan_locks[scope]:  # a venue's scanner is read by one at a time
            if not isinstance(store, BondLedger):
                alone = dict(await scan())
                return BondBook(on_chain=alone, mine=dict(alone))
            started = store.bond_clock()
            found = await scan()
            return await store.observe_bonds(self.chain_id, self.address, scope, found, started)

    async def submit(self, request: TxRequest) -> Intent:
        """Send (or resume) `request` and wait until it is final."""
        await self.send(request)
        return await self.wait(request.key)

    async def submit_or_skip(self, request: TxRequest) -> Intent:
        """`submit`; when the gas estimate reverts (nothing sent) and the request's
        pre-send check now finds the action done (done meanwhile by someone else), it is
        recorded as SKIPPED instead of raising `TxReverted`."""
        try:
            return await self.submit(request)
        except TxReverted:
            if request.already_done is None or not await request.already_done():
                raise
            return await self.submit(replace(request, just_checked=False))

    async def submit_once(self, key: str, send: Callable[[], Awaitable[Intent]]) -> Intent:
        """Do the action under `key` once, whatever crashes, restarts and replicas do: the
        intent that carries it, once it ended (this signer's) or as it stands (another's).

        * An intent recorded under `key` carries the action unless it reverted or failed
          (`carrier`): nothing is built or sent; an unfinished one is followed, this
          process's, an earlier one's (resumed) or another replica's.
        * Otherwise `send()` builds the action and submits it under `key` (it may check
          the chain, reserve a bond, approve a token, and submit again after a revert).
        * When `send` finds the action held (`SubjectsHeld`: another replica's intent
          under `key`, or another key's acting on the same subjects), the holder carries
          it: one intent that holds every subject the action names. When the subjects
          are held in part (a batch) or by none any longer, the error is raised.
        * A carrier of this signer is waited for until it ends; another signer's is
          returned as it stands, its signed transaction broadcast again if the node lost
          it (`take_over`): the replica that recorded it may be dead."""
        recorded = await self.carrier(key)
        if recorded is not None:
            return await self.take_over(recorded)
        try:
            intent = await send()
        except SubjectsHeld as held:
            carriers = set(held.holders.values())
            if len(carriers) != 1 or set(held.holders) != set(held.subjects):
                raise  # none, or only part of the action is held: no one intent carries it
            holder = await self._store.get(carriers.pop())
            if holder is None or not holder.state.holds_subjects:
                raise  # let go meanwhile: the caller tries again later
            intent = holder
        return await self.take_over(intent)

    async def carrier(self, key: str) -> Intent | None:
        """The intent recorded under `key` that carries its action (None: sending under
        `key` makes a new intent, one that may post a new bond). A reverted or failed
        intent carries nothing: the action is tried again under the same key."""
        recorded = await self._store.get(key)
        if recorded is None or recorded.state in (IntentState.REVERTED, IntentState.FAILED):
            return None
        return recorded

    async def take_over(self, intent: Intent) -> Intent:
        """`intent` (one that carries an action) followed to its end when it is this
        signer's; another signer's as it stands, relayed (`relay`) while unfinished."""
        if intent.sender.lower() == self.address.lower():
            return intent if intent.final else await self.wait(intent.key)
        if not intent.final:
            await self.relay(intent)
        return intent

    async def send(self, request: TxRequest) -> Intent:
        """Record and broadcast `request` (or find its existing intent); do not wait.

        A key whose intent is unfinished is resumed; CONFIRMED or SKIPPED is returned as
        is; REVERTED or FAILED is tried again as a new transaction (pre-send check first).
        Raises `TxReverted` when the gas estimate reverts (nothing is recorded or sent).
        """
        async with self._key_locks[request.key]:
            if request.already_done is not None:
                self._prechecks[request.key] = request.already_done
            existing = await self._store.get(request.key)
            if existing is not None and existing.sender.lower() != self.address.lower():
                # Another signer's intent under the same key (replicas share a store): it
                # is theirs to drive; what it acts on is held until it ends.
                raise SubjectsHeld(
                    request.key, dict.fromkeys(request.subjects or (request.key,), existing.key)
                )
            if existing is not None:
                if (
                    existing.data != request.data_hex
                    or (existing.to or "").lower() != (request.to or "").lower()
                ):
                    emit(logger, logging.WARNING, "tx.key_reused", key=request.key)
                if not existing.final:
                    self._follow(existing)
                    return existing
                if existing.state in TERMINAL_STATES:  # done; a reverted or failed one is not
                    return existing
            intent = await self._create(request, existing)
            if not intent.final:
                self._follow(intent)
            return intent

    async def wait(self, key: str) -> Intent:
        """Wait until the intent under `key` is final and return it."""
        task = self._tasks.get(key)
        if task is not None:
            return await asyncio.shield(task)
        intent = await self._store.get(key)
        if intent is None:
            raise TxError(f"{key}: no such intent")
        if intent.final:
            return intent
        return await asyncio.shield(self._follow(intent))

    async def resume(self) -> list[str]:
        """Start following every unfinished intent of this signer; returns their keys."""
        unfinished = await self._store.unfinished(self.chain_id, self.address)
        if unfinished:
            emit(
                logger,
                logging.INFO,
                "tx.recovering",
                count=len(unfinished),
                keys=[i.key for i in unfinished],
            )
        for intent in unfinished:
            self._follow(intent)
        return [i.key for i in unfinished]

    async def balance(self) -> int:
        """The signer's balance in the native token (wei), at the latest block."""

        async def run(w3: Web3) -> int:
            return int(await w3.eth.get_balance(self.address, "latest"))

        return await self._pool.call("eth_getBalance", run)

    async def intent(self, key: str) -> Intent | None:
        """The intent recorded under `key`, as it stands."""
        return await self._store.get(key)

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        """The intents (of any signer) that hold `subjects` now, by subject."""
        return await self._store.holders(subjects) if subjects else {}

    async def relay(self, intent: Intent) -> bool:
        """Broadcast another signer's recorded transaction again, when the node has neither
        mined nor seen it: a replica that died after recording it cannot, and its subjects
        stay held until it is mined or provably dropped. Returns whether it was sent."""
        if intent.final or not intent.attempts:
            return False
        if await self._inclusion(intent) is not None or await self._known(intent.latest.tx_hash):
            return False
        outcome, message = await self._broadcast(intent)
        emit(
            logger,
            logging.INFO if outcome == SendAnswer.SENT else logging.WARNING,
            "tx.relayed" if outcome == SendAnswer.SENT else "tx.relay_refused",
            key=intent.key,
            sender=intent.sender,
            tx_hash=intent.latest.tx_hash,
            reason=message,
        )
        return outcome == SendAnswer.SENT

    async def recover(self) -> list[Intent]:
        """Reconcile every unfinished intent against the chain and wait until all are final."""
        keys = await self.resume()
        return [await self.wait(key) for key in keys]

    async def close(self) -> None:
        """Stop following (intents stay in the store; `recover()` continues them later)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()

    # -- chain reads ------------------------------------------------------------------------

    async def _head(self) -> int:
        return int(await self._pool.call("eth_blockNumber", lambda w3: w3.eth.block_number))

    async def _nonce_at(self, block: Literal["latest", "pending"]) -> int:
        async def run(w3: Web3) -> int:
            return int(await w3.eth.get_transaction_count(self.address, block))

        return await self._pool.call("eth_getTransactionCount", run)

    async def market(self) -> FeeChoice:
        """What the fee policy would pay now (fees None: above the cap)."""

        async def run(w3: Web3) -> Any:
            return await w3.eth.fee_history(
                self._settings.fee_history_blocks,
                "latest",
                [self._settings.priority_fee_percentile],
            )

        history = await self._pool.call("eth_feeHistory", run)
        base_fees = [int(b) for b in history["baseFeePerGas"]]
        rewards = [int(r[0]) for r in history.get("reward") or () if r]
        return choose_fees(base_fees, rewards, self._policy)

    async def _known(self, tx_hash: str) -> bool:
        async def run(w3: Web3) -> bool:
            try:
                await w3.eth.get_transaction(HexBytes(tx_hash))
            except TransactionNotFound:
                return False
            return True

        return await self._pool.call("eth_getTransactionByHash", run)

    async def _inclusion(self, intent: Intent) -> Inclusion | None:
        """The canonical inclusion of any of the intent's attempts, newest first."""

        async def run(w3: Web3) -> Inclusion | None:
            for tx_hash in reversed(intent.hashes):
                try:
                    receipt = await w3.eth.get_transaction_receipt(HexBytes(tx_hash))
                except TransactionNotFound:
                    continue
                if receipt is None or receipt.get("blockNumber") is None:
                    continue
                try:
                    block = await w3.eth.get_block(receipt["blockNumber"])
                except BlockNotFound:
                    continue
                if HexBytes(block["hash"]) != HexBytes(receipt["blockHash"]):
                    continue  # a stale receipt from a block that left the chain
                contract = receipt.get("contractAddress")
                return Inclusion(
                    tx_hash=tx_hash,
                    block_number=int(receipt["blockNumber"]),
                    block_hash=HexBytes(receipt["blockHash"]).to_0x_hex(),
                    status=int(receipt["status"]),
                    gas_used=int(receipt["gasUsed"]),
                    effective_gas_price=int(receipt.get("effectiveGasPrice", 0)),
                    contract_address=str(contract) if contract else None,
                )
            return None

        return await self._pool.call("eth_getTransactionReceipt", run)

    # -- building blocks --------------------------------------------------------------------

    def _now(self) -> float:
        return self._clock()

    async def _save(self, intent: Intent, event: IntentEvent, **changes: Any) -> Intent:
        """Store `intent` with `changes`, in the state the table gives for `event`."""
        state = transition(intent.state, event)
        updated = intent.model_copy(update={**changes, "state": state, "updated_at": self._now()})
        await self._store.put(updated)
        return updated

    async def _estimate(self, request: TxRequest) -> int:
        call: dict[str, Any] = {"from": self.address, "data": request.data_hex}
        if request.to is not None:
            call["to"] = request.to
        if request.value:
            call["value"] = request.value

        async def run(w3: Web3) -> int:
            return int(await w3.eth.estimate_gas(call))  # type: ignore[arg-type]

        failure: BaseException | None = None
        try:
            estimate = await self._pool.call("eth_estimateGas", run)
        except RpcUnavailable:
            raise
        except Exception as error:
            if is_node_failure(error):
                raise
            failure = error
        if failure is not None:
            if is_revert(failure):
                decoded = self._decoder.decode(revert_data(failure))
                raise TxReverted(request.key, str(decoded), decoded.name)
            reason = (
                rpc_error_message(failure)
                if isinstance(failure, Web3RPCError)
                else describe_failure(failure)
            )
            raise TxError(f"{request.key}: gas estimation failed: {reason}")
        try:
            return gas_limit(
                estimate, self._settings.gas_multiplier(), self._settings.max_gas_limit
            )
        except ValueError as error:
            raise TxError(f"{request.key}: {error}") from None

    async def _fees_for_new(self, key: str) -> Fees:
        """Market fees; while they are above the cap, wait and say so."""
        polls = 0
        while True:
            choice = await self.market()
            if choice.fees is not None:
                if polls:
                    emit(logger, logging.INFO, "tx.fee_wait_over", key=key, polls=polls)
                return choice.fees
            if polls % _FEE_LOG_EVERY == 0:
                emit(
                    logger,
                    logging.WARNING,
                    "tx.fee_above_cap",
                    key=key,
                    required_gwei=_gwei(choice.required),
                    base_fee_gwei=_gwei(choice.base_fee),
                    cap_gwei=_gwei(self._policy.max_fee_per_gas),
                )
            polls += 1
            await asyncio.sleep(self._settings.poll_interval)

    async def _next_nonce(self, exclude: str | None = None) -> int:
        """Plan and take a nonce; the caller holds the nonce lock."""
        pending = await self._nonce_at("pending")
        unfinished = await self._store.unfinished(self.chain_id, self.address)
        live = {i.nonce for i in unfinished if i.nonce is not None and i.key != exclude}
        before = self._book.next_nonce
        plan = self._book.plan(pending, live)
        if plan.resynced:
            emit(
                logger,
                logging.INFO,
                "tx.nonce_resync",
                address=self.address,
                local=before,
                chain_pending=pending,
                next=plan.next_nonce,
            )
        return self._book.take()

    async def _sign(self, intent_like: Intent, nonce: int, fees: Fees) -> Attempt:
        tx: dict[str, Any] = {
            "chainId": self.chain_id,
            "nonce": nonce,
            "value": intent_like.value,
            "data": intent_like.data,
            "gas": intent_like.gas_limit,
            "maxFeePerGas": fees.max_fee_per_gas,
            "maxPriorityFeePerGas": fees.max_priority_fee_per_gas,
            "type": 2,
        }
        if intent_like.to is not None:
            tx["to"] = to_checksum_address(intent_like.to)
        signed = await self._signer.sign_transaction(tx)
        return Attempt(
            tx_hash=signed.hash_hex,
            raw_tx="0x" + signed.raw.hex(),
            max_fee_per_gas=fees.max_fee_per_gas,
            max_priority_fee_per_gas=fees.max_priority_fee_per_gas,
        )

    async def _broadcast(self, intent: Intent) -> tuple[SendAnswer, str]:
        raw = HexBytes(intent.latest.raw_tx)

        async def run(w3: Web3) -> Any:
            return await w3.eth.send_raw_transaction(raw)

        try:
            await self._pool.call("eth_sendRawTransaction", run)
        except Web3RPCError as error:
            message = rpc_error_message(error)
            lowered = message.lower()
            if any(m in lowered for m in _ALREADY_KNOWN):
                return SendAnswer.SENT, message
            if any(m in lowered for m in _NONCE_TOO_LOW):
                return SendAnswer.NONCE_LOW, message
            if any(m in lowered for m in _UNDERPRICED):
                return SendAnswer.UNDERPRICED, message
            return SendAnswer.REFUSED, message
        return SendAnswer.SENT, ""

    def _sent(self, intent: Intent, head: int) -> tuple[Attempt, ...]:
        latest = intent.latest.model_copy(update={"sent_at_block": head})
        return (*intent.attempts[:-1], latest)

    def _new_intent(
        self, request: TxRequest, previous: Intent | None, event: IntentEvent, **fields: Any
    ) -> Intent:
        """`request` as an intent of this signer, new or after `previous` (a finished one
        of the same key), moved by `event`, with `fields` besides."""
        now = self._now()
        return Intent(
            key=request.key,
            chain_id=self.chain_id,
            sender=self.address,
            to=request.to,
            data=request.data_hex,
            value=request.value,
            state=transition(previous.state if previous else None, event),
            created_at=now,
            updated_at=now,
            **fields,
        )

    async def _record_skipped(self, request: TxRequest, previous: Intent | None) -> Intent:
        intent = self._new_intent(
            request,
            previous,
            IntentEvent.FOUND_DONE,
            error="the pre-send check found the action already done on-chain",
        )
        await self._store.put(intent)
        emit(logger, logging.INFO, "tx.skipped", key=request.key)
        return intent

    async def _precheck(self, intent: Intent) -> bool | None:
        """Whether the intent's action is already done; None when no check is known."""
        check = self._prechecks.get(intent.key)
        if check is not None:
            return await check()
        to = (intent.to or "").lower()
        for (prefix, contract), by_intent in self._prefix_checks.items():
            if contract is not None and intent.key.startswith(prefix) and contract == to:
                return await by_intent(intent)
        for (prefix, contract), by_intent in self._prefix_checks.items():
            if contract is None and intent.key.startswith(prefix):
                return await by_intent(intent)
        return None

    # -- creating and first broadcast -------------------------------------------------------

    async def _create(self, request: TxRequest, previous: Intent | None) -> Intent:
        held = {
            subject: holder.key
            for subject, holder in (await self.holders(request.subjects)).items()
            if holder.key != request.key
        }
        if held:
            raise SubjectsHeld(request.key, held, request.subjects)
        if (
            request.already_done is not None
            and not request.just_checked
            and await request.already_done()
        ):
            return await self._record_skipped(request, previous)
        gas = request.gas_limit or await self._estimate(request)
        fees = await self._fees_for_new(request.key)
        draft = self._new_intent(
            request,
            previous,
            IntentEvent.RECORDED,
            gas_limit=gas,
            superseded_hashes=previous.hashes + previous.superseded_hashes if previous else (),
            subjects=request.subjects,
        )
        async with self._nonce_lock:
            nonce = await self._next_nonce(exclude=request.key)
            attempt = await self._sign(draft, nonce, fees)
            intent = draft.model_copy(update={"nonce": nonce, "attempts": (attempt,)})
            # Its own bonds, and those of the subjects it carries (claims in one batch).
            holds = tuple(
                hold
                for name in dict.fromkeys((request.key, *request.subjects))
                for hold in self._holds.get(name, ())
            )
            try:
                # Recorded (subjects taken, bonds reserved) before it is sent.
                if holds:
                    await self._store.put(intent, holds)
                else:
                    await self._store.put(intent)
            except (SubjectsHeld, BondRefused):
                self._book.give_back(nonce)
                raise
            emit(
                logger,
                logging.INFO,
                "tx.signed",
                key=intent.key,
                nonce=nonce,
                tx_hash=attempt.tx_hash,
                max_fee_gwei=_gwei(fees.max_fee_per_gas),
                tip_gwei=_gwei(fees.max_priority_fee_per_gas),
                gas=gas,
            )
            return await self._first_broadcast(intent)

    async def _first_broadcast(self, intent: Intent) -> Intent:
        """Broadcast a freshly signed intent; the caller holds the nonce lock."""
        for _ in range(5):
            try:
                outcome, message = await self._broadcast(intent)
                head = await self._head()
            except RpcUnavailable as error:
                emit(logger, logging.WARNING, "tx.broadcast_deferred", key=intent.key, why=error)
                return intent  # stays SIGNED; the monitor broadcasts it later
            assert intent.nonce is not None
            nonce: int = intent.nonce
            if outcome == SendAnswer.SENT:
                intent = await self._save(
                    intent, IntentEvent.SENT, attempts=self._sent(intent, head)
                )
                emit(
                    logger,
                    logging.INFO,
                    "tx.broadcast",
                    key=intent.key,
                    nonce=intent.nonce,
                    tx_hash=intent.latest.tx_hash,
                )
                return intent
            if outcome == SendAnswer.NONCE_LOW:
                emit(
                    logger, logging.WARNING, "tx.nonce_too_low", key=intent.key, nonce=intent.nonce
                )
                nonce = await self._next_nonce(exclude=intent.key)
                fees = self._fees_of(intent.latest)
            elif outcome == SendAnswer.UNDERPRICED:
                market = await self.market()
                fees = market.fees or self._fees_of(intent.latest)
                bumped = bump_fees(self._fees_of(intent.latest), market, self._policy)
                fees = bumped or fees
            else:
                self._book.give_back(nonce)
                emit(logger, logging.ERROR, "tx.refused", key=intent.key, reason=message)
                return await self._save(
                    intent, IntentEvent.REFUSED, error=f"node refused it: {message}"
                )
            attempt = await self._sign(intent, nonce, fees)
            intent = await self._save(
                intent,
                IntentEvent.RESIGNED,
                nonce=nonce,
                attempts=(attempt,),
                superseded_hashes=intent.superseded_hashes + intent.hashes,
            )
        return intent  # still SIGNED: the monitor keeps trying

    @staticmethod
    def _fees_of(attempt: Attempt) -> Fees:
        return Fees(attempt.max_fee_per_gas, attempt.max_priority_fee_per_gas)

    # -- following --------------------------------------------------------------------------

    def _follow(self, intent: Intent) -> asyncio.Task[Intent]:
        task = self._tasks.get(intent.key)
        if task is None or task.done():
            task = asyncio.create_task(self._drive(intent), name=f"tx:{intent.key}")
            self._tasks[intent.key] = task
        return task

    async def _drive(self, intent: Intent) -> Intent:
        try:
            while not intent.final:
                try:
                    intent = await self._step(intent)
                except RpcUnavailable as error:
                    emit(logger, logging.WARNING, "tx.rpc_unavailable", key=intent.key, why=error)
                except ChainError as error:
                    emit(logger, logging.WARNING, "tx.step_failed", key=intent.key, why=error)
                except Exception as error:
                    why = (
                        describe_failure(error)
                        if is_node_failure(error)
                        else f"{type(error).__name__}: {error}"
                    )
                    emit(logger, logging.ERROR, "tx.step_failed", key=intent.key, why=why)
                if not intent.final:
                    await asyncio.sleep(self._settings.poll_interval)
            return intent
        finally:
            if self._tasks.get(intent.key) is asyncio.current_task():
                del self._tasks[intent.key]

    async def _step(self, intent: Intent) -> Intent:
        """One look at the chain; returns the intent as it now stands (already stored).

        The choice is `decide`'s; this gathers the facts it asks for and carries it out."""
        head = await self._head()
        seen = Observation(
            state=intent.state,
            head=head,
            confirmations=self._settings.confirmations,
            resend_after_blocks=self._settings.resend_after_blocks,
            nonce=intent.nonce,
            sent_at_block=intent.latest.sent_at_block,
            is_filler=intent.key.startswith(NONCE_FILL_PREFIX),
        )
        inclusion: Inclusion | None = None  # the receipt `decide` acts on, once read
        while (action := decide(seen)).do == Do.LOOK:
            assert action.look is not None
            match action.look:
                case Look.RECEIPT:
                    inclusion = await self._inclusion(intent)
                    seen = replace(seen, receipt=self._receipt(intent, inclusion))
                case Look.RECEIPT_AFTER_NONCE:
                    inclusion = await self._inclusion(intent)
                    if inclusion is not None:
                        self._consumed_seen.pop(intent.key, None)
                    seen = replace(seen, receipt_after_nonce=self._receipt(intent, inclusion))
                case Look.MINED_NONCE:
                    mined = await self._nonce_at("latest")
                    if intent.nonce is not None and mined <= intent.nonce:
                        self._consumed_seen.pop(intent.key, None)
                    seen = replace(seen, mined_nonce=mined)
                case Look.NONCE_TAKEN_SETTLED:
                    now = self._clock()
                    first = self._consumed_seen.setdefault(intent.key, (head, now))
                    settled = nonce_taken_settled(first, head, now, self._settings.poll_interval)
                    seen = replace(seen, nonce_taken_settled=settled)
                case Look.KNOWN:
                    seen = replace(seen, known=await self._known(intent.latest.tx_hash))
                case Look.ALREADY_DONE:
                    seen = replace(seen, already_done=await self._precheck(intent))
        return await self._act(intent, action, inclusion, head)

    @staticmethod
    def _receipt(intent: Intent, inclusion: Inclusion | None) -> Receipt | None:
        if inclusion is None:
            return None
        return Receipt(
            block_number=inclusion.block_number,
            status=inclusion.status,
            recorded=intent.inclusion == inclusion,
        )

    async def _act(
        self, intent: Intent, action: Action, inclusion: Inclusion | None, head: int
    ) -> Intent:
        """Carry out `decide`'s `action`; every state change is its event, via the table."""
        match action.do:
            case Do.WAIT:
                return intent
            case Do.MARK_MINED | Do.FINISH:
                assert inclusion is not None
                assert action.event is not None
                return await self._included(intent, inclusion, head, action.event)
            case Do.REBROADCAST:
                if action.event == IntentEvent.REORGED:
                    _log_reorged(intent)
                    intent = await self._save(intent, IntentEvent.REORGED, inclusion=None)
                elif action.reason == "dropped":
                    emit(
                        logger,
                        logging.WARNING,
                        "tx.dropped",
                        key=intent.key,
                        tx_hash=intent.latest.tx_hash,
                    )
                return await self._rebroadcast(intent, head, reason=action.reason)
            case Do.REPLACE:
                await self._fill_gaps(intent)
                return await self._replace(intent, head)
            case Do.SKIP | Do.ABANDON | Do.RESIGN if action.nonce_taken:
                return await self._nonce_consumed(intent, action)
            case Do.SKIP:
                emit(logger, logging.INFO, "tx.skipped", key=intent.key)
                return await self._save(intent, IntentEvent.FOUND_DONE, error=action.reason)
        raise AssertionError(f"{intent.key}: no way to carry out {action}")

    async def _included(
        self, intent: Intent, inclusion: Inclusion, head: int, event: IntentEvent
    ) -> Intent:
        if intent.inclusion is not None and intent.inclusion.block_hash != inclusion.block_hash:
            _log_reorged(intent, now_in_block=inclusion.block_number)
        if event != IntentEvent.INCLUDED:
            return await self._finish(intent, inclusion, event)
        intent = await self._save(intent, IntentEvent.INCLUDED, inclusion=inclusion)
        emit(
            logger,
            logging.INFO,
            "tx.mined",
            key=intent.key,
            tx_hash=inclusion.tx_hash,
            block_number=inclusion.block_number,
            confirmations=head - inclusion.block_number + 1,
        )
        return intent

    async def _finish(self, intent: Intent, inclusion: Inclusion, event: IntentEvent) -> Intent:
        if event == IntentEvent.CONFIRMED:
            intent = await self._save(intent, IntentEvent.CONFIRMED, inclusion=inclusion)
            emit(
                logger,
                logging.INFO,
                "tx.confirmed",
                key=intent.key,
                tx_hash=inclusion.tx_hash,
                block_number=inclusion.block_number,
                gas_used=inclusion.gas_used,
            )
            return intent
        decoded = await self._why_reverted(intent, inclusion)
        intent = await self._save(
            intent,
            IntentEvent.REVERTED,
            inclusion=inclusion,
            error=str(decoded),
            error_name=decoded.name,
        )
        emit(
            logger,
            logging.ERROR,
            "tx.reverted",
            key=intent.key,
            tx_hash=inclusion.tx_hash,
            error=str(decoded),
        )
        return intent

    async def _why_reverted(self, intent: Intent, inclusion: Inclusion) -> DecodedError:
        """Why a mined transaction reverted: its custom error, from an exact trace where the
        node offers one, else from replaying the call on the state before its block; when
        no revert data can be had, the reason says why."""
        trace_error = ""
        try:
            trace = await self._pool.request(
                "debug_traceTransaction", [inclusion.tx_hash, {"tracer": "callTracer"}]
            )
        except Exception as error:  # tracing is optional on many nodes
            logger.debug("trace unavailable for %s: %s", intent.key, type(error).__name__)
        else:
            if isinstance(trace, Mapping):  # web3 answers an AttributeDict, not a dict
                output = trace.get("output")
                if isinstance(output, str) and output not in ("", "0x"):
                    return self._decoder.decode(output)
                trace_error = str(trace.get("error") or "")
        if "out of gas" in trace_error.lower() or inclusion.gas_used >= intent.gas_limit > 0:
            return DecodedError(
                "Empty", why=f"it ran out of gas (used {inclusion.gas_used} of {intent.gas_limit})"
            )
        call: dict[str, Any] = {
            "from": self.address,
            "data": intent.data,
            "value": intent.value,
            "gas": intent.gas_limit,
        }
        if intent.to is not None:
            call["to"] = intent.to

        async def run(w3: Web3) -> Any:
            return await w3.eth.call(call, inclusion.block_number - 1)  # type: ignore[arg-type]

        try:
            await self._pool.call("eth_call", run)
        except Exception as error:
            if not is_revert(error):
                return DecodedError("Empty", why="the node gave neither a trace nor a replay")
            decoded = self._decoder.decode(revert_data(error))
            if decoded.name != "Empty":
                return decoded
            return DecodedError(
                "Empty",
                why="the contract reverted without data, or the node does not return it"
                + (f" (trace: {trace_error})" if trace_error else ""),
            )
        return DecodedError(
            "Empty",
            why=(
                f"the call succeeds on the state before block {inclusion.block_number}, so an "
                "earlier transaction in that block changed what it depended on (for a "
                "proposal: another transaction proposed the question first)"
            ),
        )

    async def _rebroadcast(self, intent: Intent, head: int, *, reason: str) -> Intent:
        outcome, message = await self._broadcast(intent)
        if outcome == SendAnswer.SENT:
            intent = await self._save(intent, IntentEvent.SENT, attempts=self._sent(intent, head))
            emit(
                logger,
                logging.INFO,
                "tx.rebroadcast",
                key=intent.key,
                tx_hash=intent.latest.tx_hash,
                reason=reason,
            )
            return intent
        event = after_resend(intent.state, outcome)
        if outcome == SendAnswer.UNDERPRICED:
            if event is not None:
                intent = await self._save(intent, event)
            return await self._replace(intent, head, because="the node wants higher fees")
        if outcome == SendAnswer.NONCE_LOW:
            # Mined (the next look finds the receipt) or consumed by someone else.
            if event is not None:
                intent = await self._save(intent, event, attempts=self._sent(intent, head))
            return intent
        emit(logger, logging.WARNING, "tx.rebroadcast_refused", key=intent.key, reason=message)
        return intent

    async def _replace(self, intent: Intent, head: int, *, because: str = "not mined") -> Intent:
        assert intent.nonce is not None
        previous = self._fees_of(intent.latest)
        market = await self.market()
        fees = bump_fees(previous, market, self._policy)
        if fees is None:
            last = self._cap_logged_at.get(intent.key)
            if last is None or head - last >= self._settings.resend_after_blocks:
                self._cap_logged_at[intent.key] = head
                emit(
                    logger,
                    logging.WARNING,
                    "tx.fee_cap_reached",
                    key=intent.key,
                    nonce=intent.nonce,
                    max_fee_gwei=_gwei(previous.max_fee_per_gas),
                    required_gwei=_gwei(market.required),
                    cap_gwei=_gwei(self._policy.max_fee_per_gas),
                )
            return intent
        attempt = await self._sign(intent, intent.nonce, fees)
        intent = await self._save(
            intent, IntentEvent.REPLACED, attempts=(*intent.attempts, attempt)
        )
        self._observer.tx_replaced()
        emit(
            logger,
            logging.INFO,
            "tx.replaced",
            key=intent.key,
            nonce=intent.nonce,
            because=because,
            tx_hash=attempt.tx_hash,
            max_fee_gwei=_gwei(fees.max_fee_per_gas),
            tip_gwei=_gwei(fees.max_priority_fee_per_gas),
        )
        outcome, _ = await self._broadcast(intent)
        if outcome == SendAnswer.SENT:
            intent = await self._save(intent, IntentEvent.SENT, attempts=self._sent(intent, head))
        return intent

    async def _nonce_consumed(self, intent: Intent, action: Action) -> Intent:
        """Our nonce was used by a transaction we never signed: `action` is SKIP (the
        action is done), ABANDON (nobody can tell) or RESIGN (on a fresh nonce)."""
        assert action.event is not None
        self._consumed_seen.pop(intent.key, None)
        emit(
            logger,
            logging.WARNING,
            "tx.nonce_consumed",
            key=intent.key,
            nonce=intent.nonce,
            hashes=list(intent.hashes),
        )
        superseded = intent.superseded_hashes + intent.hashes
        if action.do != Do.RESIGN:
            return await self._save(
                intent, action.event, superseded_hashes=superseded, error=action.reason
            )
        fees = await self._fees_for_new(intent.key)
        async with self._nonce_lock:
            nonce = await self._next_nonce(exclude=intent.key)
            attempt = await self._sign(intent, nonce, fees)
            intent = await self._save(
                intent,
                action.event,
                nonce=nonce,
                attempts=(attempt,),
                inclusion=None,
                superseded_hashes=superseded,
            )
            return await self._first_broadcast(intent)

    async def _fill_gaps(self, intent: Intent) -> None:
        """Fill nonces below `intent`'s that nothing will fill (else it waits forever)."""
        assert intent.nonce is not None
        # Against the mined nonce, not the pending one: a node may count our own queued
        # transaction as pending although the nonce below it is missing.
        mined = await self._nonce_at("latest")
        if mined >= intent.nonce:
            return
        unfinished = await self._store.unfinished(self.chain_id, self.address)
        live = {i.nonce for i in unfinished if i.nonce is not None}
        holes = [h for h in plan_nonce(mined, live, None).holes if h < intent.nonce]
        for hole in holes:
            key = f"{NONCE_FILL_PREFIX}{self.address}:{hole}"
            existing = await self._store.get(key)
            if existing is not None and not existing.final:
                continue
            market = await self.market()
            if market.fees is None:
                return
            now = self._now()
            filler = Intent(
                key=key,
                chain_id=self.chain_id,
                sender=self.address,
                to=self.address,
                gas_limit=PLAIN_TRANSFER_GAS,
                nonce=hole,
                # A new filler even where a finished one was: its nonce is a hole again.
                state=transition(None, IntentEvent.RECORDED),
                created_at=now,
                updated_at=now,
            )
            filler = filler.model_copy(
                update={"attempts": (await self._sign(filler, hole, market.fees),)}
            )
            await self._store.put(filler)
            emit(logger, logging.WARNING, "tx.nonce_gap", address=self.address, nonce=hole)
            self._follow(filler)


def _log_reorged(intent: Intent, **more: object) -> None:
    """The block that held `intent`'s transaction left the chain."""
    assert intent.inclusion is not None
    emit(
        logger,
        logging.WARNING,
        "tx.reorged",
        key=intent.key,
        tx_hash=intent.inclusion.tx_hash,
        block_number=intent.inclusion.block_number,
        block_hash=intent.inclusion.block_hash,
        **more,
    )
