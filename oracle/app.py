"""The composition root: the one place that turns settings into objects.

Everything else receives what it works with: the store, the research agents with their
model APIs, search providers, page readers and classifiers, the venues with their chain
objects (RPC pool, signer, transaction manager, contract, submitter, scanner), the
metrics registry. It loads web3, SQLAlchemy, aiohttp and the model SDKs, so commands
import it only inside themselves; nothing below the command line imports it.

`assemble` and `Daemon.start` are the daemon's set-up checks: everything that can be
found wrong before a job runs is, and each problem is a `SetupError` naming the setting to
fix. In order, nothing created before what it depends on proved usable:

1. the agents build (an agent's key, its recordings), and `daemon.window_model`'s model;
2. `daemon.proofs_dir` can be created and written;
3. the database (`database.url`) answers, is migrated to the current schema (the daemon
   applies pending migrations itself), and takes writes;
4. `Daemon.start` starts every venue: a chain source reaches its deployment on the
   expected chain, with code at its addresses, and its signer unlocks (`ChainWiring`).

The metrics port is bound by `oracle.daemon.runner.listen`. The daemon's metrics are
also the chain layer's observer (RPC calls per endpoint, fee-bumped replacements), and
carry the build (`oracle_build_info`: version, `ORACLE_COMMIT`, config checksum) and the
signer balance threshold (`chains[].signer.min_balance_wei`, the highest), and which chain
each chain source is on (`oracle_source_chain{source, chain}`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from aiohttp.abc import AbstractResolver
from pydantic import SecretStr

from oracle import __version__, scrub
from oracle.agents.base import PrivateSession, ResearchAgent
from oracle.agents.classify import SourceClassifier
from oracle.agents.data import DataAgent
from oracle.agents.llm import LlmAgent
from oracle.agents.metrics import AgentMetrics
from oracle.agents.pages import PageReader
from oracle.agents.providers.base import ChatModel
from oracle.agents.replay import ReplayAgent
from oracle.agents.search.base import SearchProvider, SessionFactory
from oracle.agents.search.feeds import FeedSearch
from oracle.agents.search.providers import BraveSearch, GdeltSearch, SearxngSearch, TavilySearch
from oracle.agents.settings import (
    AgentConfig,
    BraveConfig,
    DataAgentConfig,
    FeedsConfig,
    GdeltConfig,
    LlmAgentConfig,
    SearchConfig,
    SearxngConfig,
    TavilyConfig,
)
from oracle.agents.tools import ResearchTools
from oracle.agents.window import ModelWindowReader
from oracle.chain.bulletin import BulletinBoard
from oracle.chain.connect import DEPLOYMENT_FILE, check_deployment, connect
from oracle.chain.contracts import ADAPTER, ORACLE, AgentOracle, Deployment, error_decoder
from oracle.chain.intents import InMemoryIntentStore, IntentStore
from oracle.chain.keys import Signer, signer_from_settings
from oracle.chain.market import MarketSource as QuestionScanner
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.reality import QuestionSource, RealityAnswerer, reality_contract
from oracle.chain.reality_arbitration import ARBITRATION_PREFIX, register_arbitration_check
from oracle.chain.reality_reopen import register_reopen_check
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import ChainSettings, NamedChain
from oracle.chain.submitter import ProposalSubmitter
from oracle.chain.txmanager import TxManager
from oracle.chain.uma import (
    OPTIMISTIC_ORACLE_V2,
    OPTIMISTIC_ORACLE_V3,
    ManagedOptimisticOracleV2,
    OptimisticOracleV2,
    RequestSource,
    UmaProposer,
    report_whitelist,
    standing_allowance,
)
from oracle.chain.uma_v3 import OptimisticOracleV3, UmaAsserter
from oracle.config import CHAIN_SOURCES, Settings, config_checksum, legacy_chain_warning
from oracle.daemon.chain_parts import ChainClock
from oracle.daemon.chain_venue import ChainParts, ChainVenue
from oracle.daemon.http_venue import HttpMarketSource, WebhookResolver
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Monitored, Resolver
from oracle.daemon.reality_venue import RealityParts, RealityVenue
from oracle.daemon.research import AgentPool
from oracle.daemon.service import Daemon, Judgement
from oracle.daemon.settings import (
    ChainSourceConfig,
    RealitySourceConfig,
    UmaSourceConfig,
    UmaV3SourceConfig,
)
from oracle.daemon.uma_v3_venue import UmaV3Parts, UmaV3Venue
from oracle.daemon.uma_venue import UmaParts, UmaVenue
from oracle.errors import (
    ChainError,
    ChainIdMismatch,
    ConfigError,
    DeploymentError,
    OracleError,
    RpcUnavailable,
    SetupError,
)
from oracle.files import make_directory
from oracle.log import emit
from oracle.store.checkpoints import DatabaseCheckpointStore
from oracle.store.database import open_database
from oracle.store.intents import DatabaseIntentStore
from oracle.store.repository import Store

logger = logging.getLogger("oracle.app")

# -- the store ---------------------------------------------------------------------------


def open_store(settings: Settings) -> Store:
    """The daemon's store for `database.url`: created and migrated to the newest schema
    when needed (SetupError when it cannot be used)."""
    chains = settings.source_chains()
    store = Store(open_database(settings.database.url, create=True, source_chains=chains))
    store.name_chains(chains)  # markets recorded from now on, and any still unnamed
    return store


# -- research agents ---------------------------------------------------------------------


def build_agent(
    config: AgentConfig,
    metrics: AgentMetrics,
    *,
    where: str | None = None,
    model: ChatModel | None = None,
    resolver: AbstractResolver | None = None,
    clock: Callable[[], float] = time.time,
) -> ResearchAgent:
    """A fresh, isolated agent for `config`, with its own HTTP session and caches.

    `model` and `resolver` replace the model API and the page reader's DNS resolver (tests
    point them at local servers); `where` names the agent in configuration errors.
    """
    where = where or f"agents[{config.name}]"
    if isinstance(config, LlmAgentConfig):
        session = PrivateSession()
        tools = ResearchTools(
            agent=config.name,
            search=[
                build_search_provider(item, session, f"{where}.search[{index}]")
                for index, item in enumerate(config.search)
            ],
            pages=PageReader(config.pages, resolver),
            classifier=SourceClassifier(config.classification),
            metrics=metrics,
            max_tool_calls=config.budget.max_tool_calls,
            max_results_per_search=config.max_results_per_search,
            read_chars=config.read_chars,
        )
        return LlmAgent(
            config,
            model=model or build_model(config, where),
            tools=tools,
            session=session,
            metrics=metrics,
            clock=clock,
        )
    if isinstance(config, DataAgentConfig):
        keys = {
            (r, e): _secret(endpoint.resolve(f"{where}.rules[{r}].endpoints[{e}]"))
            for r, rule in enumerate(config.rules)
            for e, endpoint in enumerate(rule.endpoints)
        }
        return DataAgent(
            config,
            session=PrivateSession(),
            classifier=SourceClassifier(config.classification),
            keys=keys,
            clock=clock,
        )
    return ReplayAgent(
        config.name,
        config.directory,
        replay_as=config.replay_as,
        latency_seconds=config.latency_seconds,
        latency_jitter_seconds=config.latency_jitter_seconds,
        provider=config.provider,
        model_family=config.model_family,
    )


_Key = TypeVar("_Key", bound=SecretStr | None)


def _secret(key: _Key) -> _Key:
    """`key`, registered with the scrubber as it is read (`oracle.scrub`)."""
    scrub.add(key)
    return key


def build_agents(configs: Sequence[AgentConfig], metrics: AgentMetrics) -> list[ResearchAgent]:
    """The configured agents; one that cannot be built is a SetupError naming it."""
    agents = []
    for index, config in enumerate(configs):
        try:
            agents.append(build_agent(config, metrics))
        except ConfigError:
            raise  # names its key already
        except OracleError as error:
            raise SetupError(f"agents[{index}]", str(error)) from None
    return agents


def build_model(config: LlmAgentConfig, where: str) -> ChatModel:
    """The model API of an `llm` agent; its key is read now (ConfigError names `where`)."""
    # The SDKs take a second to import: only a daemon with such an agent pays for it.
    from oracle.agents.providers.anthropic_messages import AnthropicMessages  # noqa: PLC0415
    from oracle.agents.providers.openai_chat import OpenAIChat  # noqa: PLC0415

    key = _secret(config.resolve(where))
    base_url = str(config.base_url) if config.base_url else None
    if key is None and base_url is None:
        raise ConfigError(f"{where}: the {config.api} API needs api_key_env or api_key_file")
    if config.api == "anthropic":
        return AnthropicMessages(
            model=config.model,
            provider=config.provider_name,
            api_key=key,
            base_url=base_url,
            temperature=config.temperature,
            timeout_seconds=config.request_timeout_seconds,
            max_retries=config.max_retries,
        )
    return OpenAIChat(
        model=config.model,
        provider=config.provider_name,
        api_key=key,
        base_url=base_url,
        temperature=config.temperature,
        timeout_seconds=config.request_timeout_seconds,
        max_retries=config.max_retries,
        output_token_field=config.output_token_field,
    )


def build_window_reader(settings: Settings, metrics: AgentMetrics) -> ModelWindowReader | None:
    """The reader of answer windows `daemon.window_model` names (its agent's model API,
    a client of its own), or None when none is configured."""
    name = settings.daemon.window_model
    if name is None:
        return None
    for config in settings.agents:
        if isinstance(config, LlmAgentConfig) and config.name == name:
            return ModelWindowReader(
                build_model(config, f"agents[{config.name}]"),
                metrics=metrics,
                agent=config.name,
                pricing=config.pricing,
            )
    # Settings validation refuses a name that is no llm agent's; this is for a hand-made one.
    raise ConfigError(f"daemon.window_model: {name!r} is not an llm agent of `agents`")


def build_search_provider(
    config: SearchConfig, session: SessionFactory, where: str
) -> SearchProvider:
    """A provider on `session`; keys are read now (ConfigError names `where` when missing)."""
    match config:
        case TavilyConfig():
            return TavilySearch(
                session,
                str(config.base_url),
                _secret(config.require(where)),
                search_depth=config.search_depth,
                topic=config.topic,
                **config._http(),
            )
        case BraveConfig():
            return BraveSearch(
                session, str(config.base_url), _secret(config.require(where)), **config._http()
            )
        case SearxngConfig():
            return SearxngSearch(session, str(config.base_url), **config._http())
        case GdeltConfig():
            return GdeltSearch(
                session, str(config.base_url), timespan=config.timespan, **config._http()
            )
        case FeedsConfig():
            return FeedSearch(
                session,
                [str(url) for url in config.feeds],
                timeout_seconds=config.timeout_seconds,
                cache_seconds=config.cache_seconds,
            )


# -- chain -------------------------------------------------------------------------------


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


class ChainWiring:
    """How a chain venue's objects are made on its chain's context, called by the venue
    when it starts: the chain's pool, signer and transaction manager (`ChainContext`),
    the deployment (`deployment_file` of the chain) on that chain with code at its
    addresses (`oracle.chain.connect`), the contract, the submitter and the scanner (its
    checkpoints are the source's and contract's own)."""

    def __init__(
        self,
        config: ChainSourceConfig | UmaSourceConfig | UmaV3SourceConfig | RealitySourceConfig,
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

    async def __call__(self) -> ChainParts:
        pool, manager, _ = await self._open()
        settings = self._settings
        try:
            deployment = await check_deployment(
                pool, Path(settings.deployment_file), f"{self._context.key}.deployment_file"
            )
        except BaseException:
            await self._failed()
            raise
        oracle = AgentOracle(pool, deployment.address(ORACLE))
        scanner = QuestionScanner(
            pool,
            oracle.address,
            DatabaseCheckpointStore(self._store),
            settings.scanner,
            start_block=settings.scanner.start_block or deployment.block_number,
            name=f"{self._name}:{deployment.chain_id}:{oracle.address.lower()}",
        )
        return ChainParts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            submitter=ProposalSubmitter(manager, oracle, settings=settings.submitter),
            scanner=scanner,
            adapter_address=deployment.contracts.get(ADAPTER),
        )

    async def _require_code(self, pool: RpcPool, address: str, key: str) -> None:
        """SetupError naming `key` when the chain has no code at `address` (the chain let
        go of first)."""
        try:
            await _require_code(pool, address, key)
        except BaseException:
            await self._failed()
            raise


class UmaWiring(ChainWiring):
    """How a `uma` venue's objects are made: the chain's pool, signer and manager (its
    context), the oracle (its deployment file's, which must be a deployment on that
    chain, or `oracle_address`, with code there), the proposer and the request scanner.
    `artifact` names the oracle in a deployment file (`UmaV3Wiring` reads OOv3's)."""

    artifact = OPTIMISTIC_ORACLE_V2

    def __init__(self, config: UmaSourceConfig | UmaV3SourceConfig, context: ChainContext) -> None:
        super().__init__(config, context)
        self._config = config
        self._where = f"market_sources[{config.name}]"

    async def _oracle(self) -> tuple[RpcPool, TxManager, str, int]:
        """The chain's pool and manager, the oracle's address and the block to scan from."""
        config = self._config
        pool, manager, _ = await self._open()
        if config.deployment_file is not None:
            key = f"{self._where}.deployment_file"
            try:
                deployment = await check_deployment(pool, config.deployment_file, key)
                address = deployment.address(self.artifact)
            except DeploymentError as error:
                await self._failed()
                raise SetupError(key, f"{config.deployment_file}: {error}") from None
            except BaseException:
                await self._failed()
                raise
            start = config.start_block
            return pool, manager, address, deployment.block_number if start is None else start
        assert config.oracle_address is not None
        address = config.oracle_address
        await self._require_code(pool, address, f"{self._where}.oracle_address")
        return pool, manager, address, config.start_block or 0

    async def __call__(self) -> UmaParts:  # type: ignore[override]
        settings, config = self._settings, self._config
        assert isinstance(config, UmaSourceConfig)  # UmaV3Wiring makes its own parts
        pool, manager, address, start = await self._oracle()
        board = await self._board(pool, config)
        oracle = OptimisticOracleV2(pool, address)
        checkpoints = DatabaseCheckpointStore(self._store)
        source = RequestSource(
            pool,
            oracle.address,
            checkpoints,
            settings.scanner,
            requesters=config.requesters,
            identifiers=config.identifiers,
            start_block=start,
            name=f"{config.name}:{pool.chain_id}:{oracle.address.lower()}",
        )
        managed = await self._managed(pool, oracle, config)
        if managed is not None:
            await report_whitelist(managed, manager.address)
        return UmaParts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            proposer=UmaProposer(
                manager,
                oracle,
                allow_too_early=config.allow_too_early,
                allowance=standing_allowance(pool, config.risk.bond_allowance),
                managed=managed,
            ),
            source=source,
            start_block=start,
            scanner_settings=settings.scanner,
            board=board,
            checkpoints=checkpoints,
        )

    async def _managed(
        self, pool: RpcPool, oracle: OptimisticOracleV2, config: UmaSourceConfig
    ) -> ManagedOptimisticOracleV2 | None:
        """UMA's managed OOv2 at the oracle's address, or None for a plain one: detected
        (`managed: null`) or checked against the setting (a mismatch is a SetupError)."""
        managed = ManagedOptimisticOracleV2(pool, oracle.address)
        try:
            found = await managed.is_managed()
        except ChainError as error:
            await pool.close()
            raise SetupError(f"{self._where}.managed", f"cannot tell: {error}") from None
        if config.managed is not None and config.managed != found:
            await pool.close()
            what = "a ManagedOptimisticOracleV2" if found else "a plain OptimisticOracleV2"
            raise SetupError(
                f"{self._where}.managed",
                f"is {str(config.managed).lower()}, but {oracle.address} is {what}",
            )
        return managed if found else None

    async def _board(self, pool: RpcPool, config: UmaSourceConfig) -> BulletinBoard | None:
        """The configured bulletin board (clarifications), with code on the oracle's chain."""
        board = config.bulletin_board
        if board is None:
            return None
        await self._require_code(pool, board.address, f"{self._where}.bulletin_board.address")
        return BulletinBoard(pool, board.address, max_response_bytes=board.max_response_bytes)


class UmaV3Wiring(UmaWiring):
    """How a `uma_v3` venue's objects are made: the oracle found as for `uma` (its
    deployment file's uma/OptimisticOracleV3, or `oracle_address`), the asserter (its own
    assertions looked for from the start block) and the checkpoints for the scan of
    others' assertions."""

    artifact = OPTIMISTIC_ORACLE_V3

    async def __call__(self) -> UmaV3Parts:  # type: ignore[override]
        pool, manager, address, start = await self._oracle()
        oracle = OptimisticOracleV3(pool, address)
        return UmaV3Parts(
            pool=pool,
            manager=manager,
            oracle=oracle,
            asserter=UmaAsserter(manager, oracle, from_block=start),
            checkpoints=DatabaseCheckpointStore(self._store),
            start_block=start,
            scanner_settings=self._settings.scanner,
        )


class RealityWiring(ChainWiring):
    """How a `reality` venue's objects are made: the chain's pool, signer and manager
    (its context), code at `contract_address` on that chain, the answerer (no single
    bond above the per-question cap) and the question scanner. The contract is probed
    for the configured version and bond token (`RealityETH.deployment_problem`): a
    mismatch is a SetupError naming `market_sources[<name>].contract`."""

    def __init__(self, config: RealitySourceConfig, context: ChainContext) -> None:
        super().__init__(config, context)
        self._config = config
        context.register_check(ARBITRATION_PREFIX, register_arbitration_check)

    async def __call__(self) -> RealityParts:  # type: ignore[override]
        settings, config = self._settings, self._config
        pool, manager, signer = await self._open()
        await self._require_code(
            pool, config.contract_address, f"market_sources[{config.name}].contract_address"
        )
        reality = reality_contract(
            pool, config.contract_address, version=config.contract, bond_token=config.bond_token
        )
        problem = await reality.deployment_problem()
        if problem is not None:
            await self._failed()
            raise SetupError(
                f"market_sources[{config.name}].contract",
                f"{reality.address} on chain {pool.chain_id}: {problem}",
            )
        # Reopenings left unfinished by a previous process are checked against the chain
        # before anything is sent again (`manager.resume()`); arbitration requests are by
        # the chain's check (`register_check`).
        register_reopen_check(manager, reality.address)
        checkpoints = DatabaseCheckpointStore(self._store)
        source = QuestionSource(
            pool,
            reality.address,
            checkpoints,
            settings.scanner,
            arbitrators=config.arbitrators,
            templates=config.templates,
            askers=config.askers,
            start_block=config.start_block,
            name=f"{config.name}:{pool.chain_id}:{reality.address.lower()}",
        )
        return RealityParts(
            pool=pool,
            manager=manager,
            reality=reality,
            answerer=RealityAnswerer(
                manager,
                reality,
                max_bond=config.bond.max_per_question_wei,
                logs_from_block=config.start_block,
                # Commit-reveal derives each nonce from the signer's own signature.
                signer=signer if config.commit_reveal else None,
            ),
            source=source,
            start_block=config.start_block,
            scanner_settings=settings.scanner,
            checkpoints=checkpoints,
        )


def chain_contexts(
    settings: Settings, store: Store, observer: ChainObserver = SILENT
) -> dict[str, ChainContext]:
    """One context per configured chain, by name (see `ChainContext`)."""
    legacy = settings.chain is not None
    return {
        chain.name: ChainContext(chain, store, observer, key="chain" if legacy else None)
        for chain in settings.chains
    }


@dataclass(frozen=True)
class ChainSession:
    """A one-shot command's view of the chain: a started pool, a manager whose intents are
    kept in memory (a command killed mid-way is simply run again), and the deployment when
    one was asked for."""

    pool: RpcPool
    manager: TxManager
    deployment: Deployment | None


@asynccontextmanager
async def chain_session(
    settings: ChainSettings,
    *,
    deployment_file: Path | None = None,
    deployment_key: str = DEPLOYMENT_FILE,
    intents: IntentStore | None = None,
) -> AsyncIterator[ChainSession]:
    """The chain for `oracle chain ...`: with `deployment_file`, checked as the daemon
    checks it (`connect`: its chain, code at its addresses); without, any node of
    `chain.rpc`. Everything is closed when the block ends."""
    deployment = None
    if deployment_file is not None:
        pool, deployment = await connect(settings, deployment_file, deployment_key=deployment_key)
    else:
        pool = RpcPool.from_settings(settings.rpc)
    manager: TxManager | None = None
    try:
        if deployment is None:
            await pool.start()
        signer = signer_from_settings(settings.signer)
        manager = TxManager(
            pool, signer, intents or InMemoryIntentStore(), settings.tx, decoder=error_decoder()
        )
        yield ChainSession(pool, manager, deployment)
    finally:
        if manager is not None:
            await manager.close()
        await pool.close()


# -- the daemon --------------------------------------------------------------------------


@dataclass
class Assembly:
    daemon: Daemon
    close: Callable[[], Awaitable[None]]


def prepare_proofs_dir(path: Path) -> None:
    """`daemon.proofs_dir` exists and takes files: a verdict is never recorded without its
    proof on disk, so a directory that refuses them would fail every market."""
    try:
        make_directory(path)
    except OSError as error:
        problem = f"cannot create the directory {path} ({error.strerror})"
        raise SetupError("daemon.proofs_dir", problem) from None
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise SetupError(
            "daemon.proofs_dir", f"cannot write in {path} ({error.strerror})"
        ) from None


def _describe_setup(metrics: DaemonMetrics, settings: Settings) -> None:
    """The build and the configured thresholds, as gauges beside the figures they bound."""
    metrics.describe_build(
        __version__, os.environ.get("ORACLE_COMMIT") or "unknown", config_checksum(settings)
    )
    # One threshold for the alert: the highest chain's (each chain's is in its entry).
    metrics.signer_min_balance.set(max(c.signer.min_balance_wei for c in settings.chains))
    for source in settings.market_sources:
        if isinstance(source, CHAIN_SOURCES):
            metrics.source_chain.labels(source.name, settings.chain_name(source)).set(1)
    metrics.llm_budget_per_day.set(settings.metrics.llm_budget_usd_per_day)
    metrics.auto_submitted_accuracy_min.set(settings.metrics.auto_submitted_accuracy_min)
    metrics.agent_brier_max.set(settings.metrics.agent_brier_max)


def assemble(
    settings: Settings,
    *,
    extra_sources: list[MarketSource] | None = None,
    extra_resolvers: dict[str, Resolver] | None = None,
    metrics: DaemonMetrics | None = None,
    clock: Callable[[], float] = time.time,
) -> Assembly:
    """The daemon with everything it works with, from the settings, checked in the order
    of this module's docstring; `close()` releases it all."""
    metrics = metrics or DaemonMetrics()
    scrub.add_settings(settings)  # every configured secret scrubbed from what is written
    _describe_setup(metrics, settings)
    warning = legacy_chain_warning(settings)
    if warning is not None:
        emit(logger, logging.WARNING, "config.old_chain_section", advice=warning)
    agents = build_agents(settings.agents, metrics.agents)
    window_reader = build_window_reader(settings, metrics.agents)
    prepare_proofs_dir(settings.daemon.proofs_dir)
    store = open_store(settings)
    store.clock = clock
    pool = AgentPool.of(agents, timeout_seconds=settings.consensus.agent_timeout)
    sources: list[MarketSource] = []
    resolvers: dict[str, Resolver] = {}
    contexts = chain_contexts(settings, store, observer=metrics)
    for source_config in settings.market_sources:
        if isinstance(source_config, CHAIN_SOURCES):
            context = contexts[settings.chain_name(source_config)]
        if isinstance(source_config, ChainSourceConfig):
            venue = ChainVenue(source_config, ChainWiring(source_config, context))
            sources.append(venue)
            resolvers[source_config.name] = venue
        elif isinstance(source_config, UmaSourceConfig):
            uma = UmaVenue(source_config, UmaWiring(source_config, context), metrics)
            sources.append(uma)
            resolvers[source_config.name] = uma
        elif isinstance(source_config, UmaV3SourceConfig):
            v3 = UmaV3Venue(source_config, UmaV3Wiring(source_config, context), metrics)
            sources.append(v3)
            resolvers[source_config.name] = v3
        elif isinstance(source_config, RealitySourceConfig):
            reality = RealityVenue(source_config, RealityWiring(source_config, context), metrics)
            sources.append(reality)
            resolvers[source_config.name] = reality
        else:
            sources.append(HttpMarketSource(source_config))
            resolvers[source_config.name] = WebhookResolver(source_config)
    sources += extra_sources or []
    resolvers.update(extra_resolvers or {})
    metrics.prime([a.name for a in pool.agents], [s.name for s in sources])
    for source in sources:
        if isinstance(source, Monitored):
            metrics.watch_health(source.name, source.health)
    daemon = Daemon(
        settings=settings.daemon,
        judgement=Judgement(settings.consensus, settings.sources),
        store=store,
        pool=pool,
        sources=sources,
        resolvers=resolvers,
        metrics=metrics,
        metrics_settings=settings.metrics,
        window_reader=window_reader,
        clock=clock,
    )

    async def close() -> None:
        await pool.aclose()
        if window_reader is not None:
            await window_reader.aclose()
        # A chain venue is both a source and a resolver: close each object once.
        closables: list[MarketSource | Resolver] = [*sources, *resolvers.values()]
        for closable in {id(x): x for x in closables}.values():
            await closable.aclose()
        store.engine.dispose()

    return Assembly(daemon, close)
