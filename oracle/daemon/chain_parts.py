"""What every chain venue does the same way with its connection, in one place.

A chain venue (`oracle.venues.<kind>.venue`) connects
lazily: its parts (an RPC pool, a transaction manager, the contract's wrappers) are made
by the composition root's `open_chain` on the first `start()`, which also resumes the
transactions a previous process left unfinished. The pool and the transaction manager
are the chain's (`SharedChain`: one per configured chain, shared by its venues).
`ChainConnection` holds those parts and answers what does not depend on the contract:
the chain's clock, health, the signer's balance, closing. Each venue composes one and
keeps only what is its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from oracle.chain.erc20 import Erc20
from oracle.chain.intents import Intent, IntentState
from oracle.chain.rpc import RpcPool, Web3
from oracle.chain.txmanager import TxManager
from oracle.core.amounts import token_details
from oracle.core.bonds import Refusal, to_units
from oracle.core.failures import FailureKind, classify_revert
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import SignerBalance
from oracle.errors import ChainError, ResolverError, SetupError, SourceError, TxReverted
from oracle.log import emit

CLOCK_FRESH = 0.25
"""Seconds a chain clock read is reused for (see `ChainClock`)."""


class ChainClock:
    """A chain's clock: its latest block's timestamp, which the contracts' time checks
    compare with before the next block is made. One per chain, shared by its venues.

    Callers at once share one read, and a read younger than `CLOCK_FRESH` seconds is
    reused: a block time read a moment ago is earlier than the chain's, so a time it says
    has come has come (a market is never judged early by it), and a pass over many
    markets of every venue on the chain costs one request rather than one each. A failed
    read is not kept."""

    def __init__(self) -> None:
        self._read: asyncio.Task[float] | None = None
        self._value: tuple[float, float] | None = None  # (read at, monotonic; time)

    async def now(self, read: Callable[[], Awaitable[float]]) -> float:
        """The block time, from the shared read, or from `read` (the calling venue's way
        to reach the chain) when none is fresh or under way."""
        cached = self._value
        if cached is not None and time.monotonic() - cached[0] < CLOCK_FRESH:
            return cached[1]
        if self._read is None or self._read.done():
            self._read = asyncio.ensure_future(self._fresh(read))
        # Shielded: one caller cancelled must not cancel the read the others wait for.
        return await asyncio.shield(self._read)

    async def _fresh(self, read: Callable[[], Awaitable[float]]) -> float:
        value = await read()
        self._value = (time.monotonic(), value)
        return value


class Connected(Protocol):
    """What a venue's parts have in common: the pool to reach the chain with and the
    signer's transaction manager."""

    @property
    def pool(self) -> RpcPool: ...

    @property
    def manager(self) -> TxManager: ...


P = TypeVar("P", bound=Connected)


@runtime_checkable
class SharedChain(Protocol):
    """An `open_chain` whose pool and transaction manager are its chain's, shared by the
    venues on that chain (the composition root's wirings, on a chain context): it
    resumes the manager's unfinished intents once every venue of the chain has
    registered its pre-send checks, and closes the pool and the manager when the last
    venue lets go of them; its `clock` is the chain's, read once for all its venues. A
    plain callable's parts (and clock) are the venue's own."""

    @property
    def clock(self) -> ChainClock: ...

    async def resume(self, source: str) -> None: ...

    async def release(self, source: str) -> None: ...


class ChainConnection(Generic[P]):
    """The parts of one venue once started, and what is done with them alike everywhere.

    `started(parts)` lets the venue make its own pieces from the parts (under the start
    lock, before anyone else sees them) and names the contract and the signer for the
    `event` log line (each venue in its own words); `gauges(parts)` refreshes the venue's
    bond gauges with the signer's balance."""

    def __init__(
        self,
        source: str,
        open_chain: Callable[[], Awaitable[P]],
        logger: logging.Logger,
        event: str,
        started: Callable[[P], dict[str, str]],
        *,
        gauges: Callable[[P], Awaitable[Any]] | None = None,
    ) -> None:
        self.source = source
        self._open_chain = open_chain
        self._logger = logger
        self._event = event
        self._started = started
        self._gauges = gauges
        self._lock = asyncio.Lock()
        self.parts: P | None = None
        self._start_problem: str | None = None
        self._clock = open_chain.clock if isinstance(open_chain, SharedChain) else ChainClock()

    async def start(self) -> None:
        """Connect (`open_chain`: the deployment on the expected chain, the signer
        unlocked) and resume the transactions a previous process left unfinished. A setup
        problem is a SetupError naming the setting at fault; a failed start leaves nothing
        open and may be tried again."""
        async with self._lock:
            if self.parts is not None:
                return
            parts = await self._open_chain()
            try:
                # Finish whatever a previous process left between record and confirmation.
                shared = self._open_chain
                if isinstance(shared, SharedChain):
                    await shared.resume(self.source)
                else:
                    await parts.manager.resume()
            except BaseException:
                await self._release(parts)
                raise
            self.parts = parts
            names = self._started(parts)
            self._start_problem = None
            emit(
                self._logger,
                logging.INFO,
                self._event,
                source=self.source,
                chain_id=parts.pool.chain_id,
                **names,
            )

    async def ready(self) -> P:
        """The parts, starting first if needed; a setup problem is a ChainError (reported
        by the caller as this source's or resolver's failure, and retried)."""
        try:
            await self.start()
        except SetupError as error:
            self._start_problem = str(error)
            raise ChainError(str(error)) from None
        assert self.parts is not None
        return self.parts

    async def now(self) -> float:
        """The chain's clock (`ChainClock`: shared by the venues of the chain)."""
        try:
            return await self._clock.now(self._block_time)
        except ChainError as error:
            raise ResolverError(f"source {self.source}: chain clock: {error}") from None

    async def _block_time(self) -> float:
        parts = await self.ready()
        block = await parts.pool.call("eth_getBlockByNumber", latest_block)
        return float(block["timestamp"])

    def health(self) -> str | None:
        """None while the venue can reach the chain; else why not (`/readyz`, metrics)."""
        if self.parts is None:
            return self._start_problem
        return pool_problem(self.parts.pool)

    async def signer_balance(self) -> SignerBalance | None:
        """What the signer holds to pay for answers (the bond gauges are refreshed with
        it). None while not connected: the housekeep job that asks must not be the one
        that connects."""
        parts = self.parts
        if parts is None:
            return None
        problem = self.health()
        if problem is not None:  # not wait out the pool's call deadline in every housekeep
            raise ResolverError(f"source {self.source}: signer balance: {problem}")
        try:
            wei = await parts.manager.balance()
            if self._gauges is not None:
                await self._gauges(parts)
        except ChainError as error:
            raise ResolverError(f"source {self.source}: signer balance: {error}") from None
        return SignerBalance(parts.manager.address, wei)

    async def aclose(self) -> None:
        if self.parts is not None:
            await self._release(self.parts)

    async def _release(self, parts: P) -> None:
        shared = self._open_chain
        if isinstance(shared, SharedChain):
            await shared.release(self.source)
        else:
            await parts.manager.close()
            await parts.pool.close()


class ConnectedVenue(Generic[P]):
    """The venue side of `ChainConnection`: what the ports ask of every chain venue
    (`start`, `now`, `health`, `signer_balance`, `aclose`), answered by the connection
    the venue made in its `__init__` as `self._chain`."""

    name: str
    _chain: ChainConnection[P]
    _metrics: DaemonMetrics | None

    @property
    def _parts(self) -> P | None:
        return self._chain.parts

    async def _ready(self) -> P:
        return await self._chain.ready()

    async def start(self) -> None:
        """Connect and resume (`ChainConnection.start`). The daemon calls this before its
        first job (`Daemon.start`); used without it, the first poll or answer does."""
        await self._chain.start()

    @contextmanager
    def _source_failure(self) -> Iterator[None]:
        """A chain failure while polling is this source's failure (`SourceError`)."""
        try:
            yield
        except ChainError as error:
            raise SourceError(f"source {self.name}: {error}") from None

    def _bond_refused(
        self, logger: logging.Logger, event: str, refusal: Refusal, **context: Any
    ) -> ResolverError:
        """A bond the caps refuse, sent nowhere: counted (`oracle_bond_refusals_total`) and
        logged as `event` with `context`; the error for the caller to raise."""
        if self._metrics is not None:
            self._metrics.bond_refusals.labels(self.name, refusal.reason).inc()
        emit(
            logger,
            logging.WARNING,
            event,
            source=self.name,
            **context,
            reason=refusal.reason,
            detail=refusal.detail,
        )
        return ResolverError(
            f"source {self.name}: bond refused ({refusal.reason}): {refusal.detail}"
        )

    async def now(self) -> float:
        """The chain's clock: the contract's times (a question's earliest time, a
        liveness, a timeout) run on block time."""
        return await self._chain.now()

    def health(self) -> str | None:
        return self._chain.health()

    async def signer_balance(self) -> SignerBalance | None:
        return await self._chain.signer_balance()

    async def aclose(self) -> None:
        await self._chain.aclose()


class TokenBonds:
    """A venue's ERC-20 bond currencies: their symbol and decimals (read once from the
    chain) and their gauges (none without `metrics`)."""

    def __init__(self, metrics: DaemonMetrics | None, source: str, min_balance: Decimal) -> None:
        self._metrics = metrics
        self._source = source
        self._min_balance = min_balance  # whole tokens
        self._read: dict[str, tuple[str | None, int | None]] = {}  # token -> Erc20.named()

    async def _symbol_and_decimals(
        self, pool: RpcPool, token: str
    ) -> tuple[str | None, int | None]:
        if token not in self._read:
            self._read[token] = await Erc20(pool, token).named()
        return self._read[token]

    async def decimals(self, pool: RpcPool, token: str) -> int:
        """`token`'s decimals, which every bond amount in whole tokens needs: a ChainError
        when it gives none a token can have."""
        _, decimals = await self._symbol_and_decimals(pool, token)
        if decimals is None:
            raise ChainError(f"bond token {token}: decimals() gives no number of decimals")
        return decimals

    async def named(self, pool: RpcPool, token: str) -> dict[str, object]:
        """What the venue records of `token` with each market (`currency_symbol`,
        `currency_decimals`: `oracle.core.amounts.token_details`), read once."""
        return token_details(*await self._symbol_and_decimals(pool, token))

    async def report(
        self, parts: Connected, spender: str, seen: set[str], at_risk: dict[str, int]
    ) -> None:
        """Set the gauges of each currency seen or at risk: the signer's balance, its
        floor, the allowance given to `spender` (the oracle) and the bonds at risk."""
        metrics, source = self._metrics, self._source
        if metrics is None:
            return
        us = parts.manager.address
        for token in seen | set(at_risk):
            erc20 = Erc20(parts.pool, token)
            metrics.bond_balance.labels(source, token).set(await erc20.balance_of(us))
            floor = to_units(self._min_balance, await self.decimals(parts.pool, token))
            metrics.bond_min_balance.labels(source, token).set(floor)
            metrics.bond_allowance.labels(source, token).set(await erc20.allowance(us, spender))
            metrics.bonds_at_risk.labels(source, token).set(at_risk.get(token, 0))


def chain_failure(source: str, error: ChainError) -> ResolverError:
    """A chain failure while answering, disputing or settling, as the daemon's
    ResolverError: not retryable when the call reverts with an error that names a
    standing condition (`oracle.core.failures.classify_revert`: off a proposer whitelist,
    a missing role, a request in another state), retryable otherwise."""
    permanent = (
        isinstance(error, TxReverted)
        and classify_revert(error.name, error.error) is FailureKind.PERMANENT
    )
    return ResolverError(f"source {source}: {error}", retryable=not permanent)


def intent_failure(source: str, what: str, intent: Intent) -> ResolverError:
    """An intent that ended without doing its work (`what`: "proposal", "dispute",
    "settle"), as the daemon's ResolverError: a mined transaction that reverted with an
    error that names a standing condition is not retryable; any other (a node refused
    it, a revert nobody knows) is."""
    permanent = (
        intent.state == IntentState.REVERTED
        and classify_revert(intent.error_name or "", intent.error or "") is FailureKind.PERMANENT
    )
    return ResolverError(
        f"source {source}: {what} {intent.state.value}: {intent.error or 'no reason'}",
        retryable=not permanent,
    )


def settled_reference(source: str, intent: Intent | None, not_yet: str) -> str | None:
    """What a venue's `settle` reports for its settle intent: the transaction once
    confirmed, None when the pre-send check found it settled already (by someone else);
    a ResolverError while it cannot be settled yet (`not_yet` says what) or when the
    settle failed."""
    if intent is None:
        raise ResolverError(f"source {source}: {not_yet}")
    if intent.state == IntentState.SKIPPED:
        return None
    if intent.state != IntentState.CONFIRMED:
        raise intent_failure(source, "settle", intent)
    return intent.inclusion.tx_hash if intent.inclusion is not None else None


async def latest_block(w3: Web3) -> Any:
    return await w3.eth.get_block("latest")


def pool_problem(pool: RpcPool) -> str | None:
    """None while a node of `pool` answers without failures; else why none does."""
    nodes = pool.status()
    if any(node.up and node.failures == 0 for node in nodes):
        return None
    reasons = "; ".join(f"{node.name}: {node.last_error or 'down'}" for node in nodes)
    return f"no RPC node answers ({reasons})"
