"""The venue kinds the daemon can answer on: one line each (docs/venues.md, "Adding a
venue"). Each names its `kind` (the `market_sources[].kind` that selects it), its
settings model, whether it lives on a chain (its sources then name an entry of `chains`
and share that chain's context), and its builder: `module:function` in its package,
called as `build(settings, chain context or None, metrics) -> (source, resolver)`.

The builder is named, not imported, so that loading the configuration (which needs only
the settings models: `MarketSourceConfig`) loads no chain, database or HTTP library; the
daemon imports each builder when it assembles a source of its kind.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Union, cast

from pydantic import BaseModel, Field

from oracle.daemon.settings import ChainSourceSettings, SourceSettings
from oracle.venues.http.settings import HttpSourceConfig
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.uma.settings import UmaSourceConfig, UmaV3SourceConfig

if TYPE_CHECKING:
    from oracle.daemon.chain_context import ChainContext
    from oracle.daemon.metrics import DaemonMetrics
    from oracle.daemon.ports import MarketSource, Resolver

    VenueBuilder = Callable[
        [Any, ChainContext | None, DaemonMetrics], tuple[MarketSource, Resolver]
    ]


@dataclass(frozen=True)
class VenueKind:
    """One venue kind: see the module's docstring."""

    kind: str
    settings: type[BaseModel]
    builder: str  # "module:function", imported by `builder()`
    on_chain: bool = True


KINDS: tuple[VenueKind, ...] = (
    VenueKind("http", HttpSourceConfig, "oracle.venues.http.wiring:build", on_chain=False),
    VenueKind("chain", ChainSourceConfig, "oracle.venues.own.wiring:build"),
    VenueKind("uma", UmaSourceConfig, "oracle.venues.uma.wiring:build_uma"),
    VenueKind("uma_v3", UmaV3SourceConfig, "oracle.venues.uma.wiring:build_uma_v3"),
    VenueKind("reality", RealitySourceConfig, "oracle.venues.reality.wiring:build"),
)

BY_KIND = {entry.kind: entry for entry in KINDS}

if TYPE_CHECKING:
    MarketSourceConfig = SourceSettings
else:
    # One `market_sources[]` entry: the settings model its `kind` selects.
    MarketSourceConfig = Annotated[
        Union[tuple(entry.settings for entry in KINDS)],  # noqa: UP007 (built, not written)
        Field(discriminator="kind"),
    ]


def kind_of(source: SourceSettings) -> VenueKind:
    """The registry's entry for a configured source (by its `kind`)."""
    return BY_KIND[source.kind]


def chain_source(source: SourceSettings) -> ChainSourceSettings | None:
    """`source` as a source on a chain, or None for a kind that has no chain."""
    return cast("ChainSourceSettings", source) if kind_of(source).on_chain else None


def builder(entry: VenueKind) -> VenueBuilder:
    """The entry's builder, imported now."""
    module, _, name = entry.builder.partition(":")
    return cast("VenueBuilder", getattr(importlib.import_module(module), name))
