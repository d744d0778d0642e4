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
   expected chain, with code at its addresses, and its signer unlocks (its kind's wiring,
   `oracle.venues.<kind>.wiring`, made through `oracle.venues.registry`).

The metrics port is bound by `oracle.daemon.runner.listen`. The daemon's metrics are
also the chain layer's observer (RPC calls per endpoint, fee-bumped replacements), and
carry the build (`oracle_build_info`: version, `ORACLE_COMMIT`, config checksum) and the
signer balance threshold (`chains[].signer.min_balance_wei`, the highest), and which chain
each chain source is on (`oracle_source_chain{source, chain}`).
"""

from __future__ import annotations

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
from oracle.chain.connect import DEPLOYMENT_FILE, connect
from oracle.chain.contracts import Deployment, error_decoder
from oracle.chain.intents import InMemoryIntentStore, IntentStore
from oracle.chain.keys import signer_from_settings
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import ChainSettings
from oracle.chain.txmanager import TxManager
from oracle.config import Settings, config_checksum, legacy_chain_warning
from oracle.daemon.chain_context import ChainContext
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Monitored, Resolver
from oracle.daemon.research import AgentPool
from oracle.daemon.service import Daemon, Judgement
from oracle.errors import (
    ConfigError,
    OracleError,
    SetupError,
)
from oracle.files import make_directory
from oracle.log import emit
from oracle.store.database import open_database
from oracle.store.repository import Store
from oracle.venues.registry import builder, chain_source, kind_of

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
    for name, chain in settings.source_chains().items():
        metrics.source_chain.labels(name, chain).set(1)
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
        # Each kind builds its own (oracle.venues.registry); a chain kind on its chain's context.
        on_chain = chain_source(source_config)
        context = None if on_chain is None else contexts[settings.chain_name(on_chain)]
        build = builder(kind_of(source_config))
        source, resolver = build(source_config, context, metrics)
        sources.append(source)
        resolvers[source_config.name] = resolver
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
