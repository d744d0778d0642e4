"""A configured chain as every venue on it shares it (`ChainContext`), and what each chain
venue's wiring does the same way on it (`VenueWiring`). Made by the composition root
(`oracle.app.chain_contexts`), one per entry of `chains`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from oracle.chain.contracts import error_decoder
from oracle.chain.keys import Signer, signer_from_settings
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import NamedChain
from oracle.chain.txmanager import TxManager
from oracle.daemon.chain_parts import ChainClock
from oracle.daemon.settings import ChainSourceSettings
from oracle.errors import ChainIdMismatch, RpcUnavailable, SetupError
from oracle.store.intents import DatabaseIntentStore
from oracle.store.repository import Store


async def _require_code(pool: RpcPool, address: str, key: str) -> None:
    """SetupError naming `key` when no contract is deployed at `address`."""
    code = await pool.call("eth_getCode", lambda w3: w3.eth.get_code(address))  # type: ignore[arg-type]
    if not bytes(code):
        raise SetupError(key, f"no contract at {address} on chain {pool.chain_id}")


class ChainContext:
    """One configured chain (an entry of `chains`), shared by every venue on it, as a
    Chainlink node keeps one context per chain: the RPC pool, the signer (unlocked once,
    off the event loop; a password that does not unlock the keystore is not tried again
    at every poll), ONE transaction manager (one nonce sequence for the signer, its
    intents in the daemon's database) and with it the signer's bond budget per currency
    (the database's bond ledger, keyed by chain, signer and currency), the chain's clock
    (`ChainClock`: one block read per moment for all its venues) and the pre-send checks
    that serve every venue of the chain (`register_check`). The signer's balance is read
    through its manager.

    Venues attach by name when they are made (`attach`); the first to start opens the
    chain, each resumes once its pre-send checks are registered (the manager resumes the
    signer's unfinished intents once all of them have), the last to close closes it.
    `key` names the chain's settings in errors: `chains[NAME]`, or `chain` for the old
    single-chain section."""

    def __init__(
        self,
        chain: NamedChain,
        store: Store,
        observer: ChainObserver = SILENT,
        *,
        key: str | None = None,
    ) -> None:
        self.name = chain.name
        self.settings = chain
        self.key = key or f"chains[{chain.name}]"
        self.store = store
        self.observer = observer
        self._lock = asyncio.Lock()
        self._signer: Signer | None = None
        self._signer_problem: tuple[str, str] | None = None
        self._pool: RpcPool | None = None
        self._manager: TxManager | None = None
        self._venues: set[str] = set()
        self._started: set[str] = set()
        self._resumed = False
        self._users: set[str] = set()
        self.clock = ChainClock()
        self._checks: dict[str, Callable[[TxManager], None]] = {}

    def register_check(self, name: str, register: Callable[[TxManager], None]) -> None:
        """A pre-send check that serves every venue of the chain (it reads the contract
        from the intent), which a venue kind needs: `register` puts it on the chain's
        manager once, when the manager is made (before any venue resumes), however many
        venues ask for it by `name`."""
        if name in self._checks:
            return
        self._checks[name] = register
        if self._manager is not None:
            register(self._manager)

    def attach(self, source: str) -> None:
        """`source` is a venue on this chain: the manager resumes once it has started."""
        self._venues.add(source)

    @property
    def venues(self) -> frozenset[str]:
        return frozenset(self._venues)

    async def open(self, source: str) -> tuple[RpcPool, TxManager, Signer]:
        """The started pool, the manager and the signer, opened by the first venue to ask
        (SetupError naming the setting at fault; nothing is left open)."""
        async with self._lock:
            signer = await self._unlock()
            if self._manager is None:
                pool = await self._start_pool()
                self._pool = pool
                self._manager = TxManager(
                    pool,
                    signer,
                    DatabaseIntentStore(self.store),
                    self.settings.tx,
                    decoder=error_decoder(),
                    observer=self.observer,
                )
                for register in self._checks.values():
                    register(self._manager)
            assert self._pool is not None
            self._users.add(source)
            return self._pool, self._manager, signer

    async def _start_pool(self) -> RpcPool:
        settings = self.settings
        pool = RpcPool(
            settings.rpc.urls, settings.rpc, chain_id=settings.rpc.chain_id, observer=self.observer
        )
        try:
            await pool.start()
        except ChainIdMismatch as error:
            await pool.close()
            node = f"the RPC node {error.url} serves chain id {error.actual}"
            raise SetupError(
                f"{self.key}.rpc.chain_id", f"is {settings.rpc.chain_id}, but {node}"
            ) from None
        except RpcUnavailable as error:
            await pool.close()
            raise SetupError(f"{self.key}.rpc.urls", str(error)) from None
        except BaseException:
            await pool.close()
            raise
        return pool

    async def resume(self, source: str) -> None:
        """`source` has made its parts (its pre-send checks registered): once every venue
        of the chain has, the manager resumes the signer's unfinished intents, once."""
        self._started.add(source)
        if self._resumed or not self._venues <= self._started or self._manager is None:
            return
        self._resumed = True
        await self._manager.resume()

    async def release(self, source: str) -> None:
        """`source` no longer uses the chain; the last one closes the manager and pool."""
        async with self._lock:
            self._users.discard(source)
            self._started.discard(source)
            if self._users or self._manager is None:
                return
            manager, pool = self._manager, self._pool
            self._manager = self._pool = None
            self._resumed = False
            await manager.close()
            if pool is not None:
                await pool.close()

    async def _unlock(self) -> Signer:
        if self._signer_problem is not None:
            raise SetupError(*self._signer_problem)
        if self._signer is None:
            try:
                # scrypt takes a second of CPU: not on the event loop.
                self._signer = await asyncio.to_thread(signer_from_settings, self.settings.signer)
            except SetupError as error:
                key = error.key.replace("chain.", f"{self.key}.", 1)
                self._signer_problem = (key, error.problem)
                raise SetupError(key, error.problem) from None
        return self._signer


class VenueWiring:
    """What every chain venue's wiring (`oracle.venues.<kind>.wiring`, called by the venue
    when it starts) does the same way on its chain's context: attaches the source to the
    chain, opens the chain's pool, signer and transaction manager (`ChainContext`), lets go
    of them when the start fails or the venue closes, and refuses an address without code."""

    def __init__(
        self,
        config: ChainSourceSettings,
        context: ChainContext,
    ) -> None:
        self._name = config.name
        self._context = context
        self._settings = context.settings
        self._store = context.store
        context.attach(config.name)

    @property
    def clock(self) -> ChainClock:
        return self._context.clock

    async def resume(self, source: str) -> None:
        await self._context.resume(source)

    async def release(self, source: str) -> None:
        await self._context.release(source)

    async def _open(self) -> tuple[RpcPool, TxManager, Signer]:
        return await self._context.open(self._name)

    async def _failed(self) -> None:
        """A start that failed after the chain was opened lets go of it."""
        await self._context.release(self._name)

    async def _require_code(self, pool: RpcPool, address: str, key: str) -> None:
        """SetupError naming `key` when the chain has no code at `address` (the chain let
        go of first)."""
        try:
            await _require_code(pool, address, key)
        except BaseException:
            await self._failed()
            raise
