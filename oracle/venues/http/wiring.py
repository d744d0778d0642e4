"""How an `http` source is made: the venue's API polled for markets, its webhook told
the verdicts; no chain. `build` is the registry's entry."""

from __future__ import annotations

from oracle.daemon.chain_context import ChainContext
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketSource, Resolver
from oracle.venues.http.settings import HttpSourceConfig
from oracle.venues.http.venue import HttpMarketSource, WebhookResolver


def build(
    config: HttpSourceConfig, context: ChainContext | None, metrics: DaemonMetrics
) -> tuple[MarketSource, Resolver]:
    """The venue's market source and its webhook resolver."""
    return HttpMarketSource(config), WebhookResolver(config)
