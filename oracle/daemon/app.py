"""Assemble a daemon from the settings: database, agents, market sources, resolvers."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from oracle.agents.config import build_agent
from oracle.config import Settings
from oracle.daemon.chain_venue import ChainSourceConfig, ChainVenue
from oracle.daemon.http_venue import HttpMarketSource, WebhookResolver
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Resolver
from oracle.daemon.research import AgentPool
from oracle.daemon.service import Daemon, Judgement
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


def assemble(
    settings: Settings,
    *,
    extra_sources: list[MarketSource] | None = None,
    extra_resolvers: dict[str, Resolver] | None = None,
    metrics: DaemonMetrics | None = None,
    clock: Callable[[], float] = time.time,
) -> Assembly:
    store = open_store(settings)
    store.clock = clock
    pool = AgentPool.of(
        [build_agent(config) for config in settings.agents],
        timeout_seconds=settings.consensus.agent_timeout,
    )
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
