"""Assemble a daemon from the settings: database, agents, market sources, resolvers.

`assemble` and `Daemon.start` are the daemon's set-up checks: everything that can be
found wrong before a job runs is, and each problem is a `SetupError` naming the setting to
fix. In order, nothing created before what it depends on proved usable:

1. the agents build (an agent's key, its recordings);
2. `daemon.proofs_dir` can be created and written;
3. the database (`database.url`) answers, is migrated to the current schema (the daemon
   applies pending migrations itself), and takes writes;
4. `Daemon.start` starts every venue: a chain source reaches its deployment on the
   expected chain, with code at its addresses, and its signer unlocks
   (`ChainVenue.start`).

The metrics port is bound by `oracle.daemon.runner.listen`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from oracle.agents.base import ResearchAgent
from oracle.agents.config import AgentConfig, build_agent
from oracle.config import Settings
from oracle.daemon.chain_venue import ChainSourceConfig, ChainVenue
from oracle.daemon.http_venue import HttpMarketSource, WebhookResolver
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Monitored, Resolver
from oracle.daemon.research import AgentPool
from oracle.daemon.service import Daemon, Judgement
from oracle.errors import ConfigError, OracleError, SetupError
from oracle.files import make_directory
from oracle.store.database import open_database
from oracle.store.repository import Store


@dataclass
class Assembly:
    daemon: Daemon
    close: Callable[[], Awaitable[None]]


def open_store(settings: Settings) -> Store:
    """The daemon's store for `database.url`: created and migrated to the newest schema
    when needed (SetupError when it cannot be used)."""
    return Store(open_database(settings.database.url, create=True))


def build_agents(configs: Sequence[AgentConfig]) -> list[ResearchAgent]:
    """The configured agents; one that cannot be built is a SetupError naming it."""
    agents = []
    for index, config in enumerate(configs):
        try:
            agents.append(build_agent(config))
        except ConfigError:
            raise  # names its key already
        except OracleError as error:
            raise SetupError(f"agents[{index}]", str(error)) from None
    return agents


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


def assemble(
    settings: Settings,
    *,
    extra_sources: list[MarketSource] | None = None,
    extra_resolvers: dict[str, Resolver] | None = None,
    metrics: DaemonMetrics | None = None,
    clock: Callable[[], float] = time.time,
) -> Assembly:
    agents = build_agents(settings.agents)
    prepare_proofs_dir(settings.daemon.proofs_dir)
    store = open_store(settings)
    store.clock = clock
    pool = AgentPool.of(agents, timeout_seconds=settings.consensus.agent_timeout)
    sources: list[MarketSource] = []
    resolvers: dict[str, Resolver] = {}
    for source_config in settings.market_sources:
        if isinstance(source_config, ChainSourceConfig):
            venue = ChainVenue(source_config, settings.chain, store)
            sources.append(venue)
            resolvers[source_config.name] = venue
        else:
            sources.append(HttpMarketSource(source_config))
            resolvers[source_config.name] = WebhookResolver(source_config)
    sources += extra_sources or []
    resolvers.update(extra_resolvers or {})
    metrics = metrics or DaemonMetrics()
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
        clock=clock,
    )

    async def close() -> None:
        await pool.aclose()
        # A chain venue is both a source and a resolver: close each object once.
        closables: list[MarketSource | Resolver] = [*sources, *resolvers.values()]
        for closable in {id(x): x for x in closables}.values():
            await closable.aclose()
        store.engine.dispose()

    return Assembly(daemon, close)
