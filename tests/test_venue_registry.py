"""The registry of venue kinds (oracle.venues.registry): each line's parts agree, the
configuration's union of market sources is the registry's, and loading the configuration
imports no venue's builder (nor the chain libraries behind them)."""

from __future__ import annotations

import inspect
import typing

import pytest
from pydantic import TypeAdapter, ValidationError

from oracle.config import Settings
from oracle.daemon.metrics import DaemonMetrics
from oracle.venues.http.venue import HttpMarketSource, WebhookResolver
from oracle.venues.registry import (
    KINDS,
    MarketSourceConfig,
    VenueKind,
    builder,
    chain_source,
    kind_of,
)
from tests.test_layers import _loaded_after

UMA = "0x" + "11" * 20


def test_kinds_are_unique_and_each_is_its_settings_kind() -> None:
    assert len({entry.kind for entry in KINDS}) == len(KINDS)
    for entry in KINDS:
        (literal,) = typing.get_args(entry.settings.model_fields["kind"].annotation)
        assert literal == entry.kind


@pytest.mark.parametrize("entry", KINDS, ids=lambda entry: entry.kind)
def test_each_builder_is_a_function_of_its_package_taking_settings_context_metrics(
    entry: VenueKind,
) -> None:
    build = builder(entry)
    module, _, _ = entry.builder.partition(":")
    assert entry.settings.__module__.rsplit(".", 1)[0] == module.rsplit(".", 1)[0]
    assert list(inspect.signature(build).parameters) == ["config", "context", "metrics"]


def test_an_http_source_builds_without_a_chain_into_a_source_and_a_resolver() -> None:
    config = TypeAdapter(MarketSourceConfig).validate_python(
        {"kind": "http", "name": "h", "url": "https://x.test/m", "result_url": "https://x.test/r"}
    )
    assert chain_source(config) is None
    source, resolver = builder(kind_of(config))(config, None, DaemonMetrics())
    assert isinstance(source, HttpMarketSource)
    assert isinstance(resolver, WebhookResolver)


def test_the_union_selects_the_settings_by_kind_and_refuses_an_unknown_kind() -> None:
    adapter = TypeAdapter(MarketSourceConfig)
    uma = adapter.validate_python({"kind": "uma", "name": "u", "oracle_address": UMA})
    assert kind_of(uma).kind == "uma"
    assert chain_source(uma) is uma
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        adapter.validate_python({"kind": "augur", "name": "a"})


def test_settings_name_the_chain_of_each_source_on_a_chain() -> None:
    settings = Settings.model_validate(
        {
            "market_sources": [
                {"kind": "uma", "name": "u", "oracle_address": UMA},
                {
                    "kind": "http",
                    "name": "h",
                    "url": "https://x.test",
                    "result_url": "https://x.test",
                },
            ]
        }
    )
    assert settings.source_chains() == {"u": "default"}


def test_loading_the_configuration_imports_no_builder_and_no_chain_library() -> None:
    loaded = _loaded_after(
        "import oracle.config", ("web3", "sqlalchemy", "aiohttp", "oracle.venues.uma.wiring")
    )
    assert loaded == []
