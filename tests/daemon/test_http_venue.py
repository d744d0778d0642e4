"""The HTTP venue's failures name the source and the reason, never the venue's URL (which
may carry its API key)."""

from __future__ import annotations

import asyncio

import pytest

from oracle.daemon.http_venue import HttpMarketSource
from oracle.daemon.settings import HttpSourceConfig
from oracle.devchain import free_port
from oracle.errors import SourceError

KEY = "venuekey77"


def _poll(url: str) -> str:
    # Built without validation, as a venue's URL that only fails when it is used.
    config = HttpSourceConfig.model_construct(
        name="venue",
        kind="http",
        url=url,
        result_url="https://venue.example/results",
        items_path="",
        headers={},
        timeout_seconds=2.0,
    )
    source = HttpMarketSource(config)

    async def deliver(_: object) -> None:
        raise AssertionError("nothing to deliver")

    async def run() -> str:
        try:
            with pytest.raises(SourceError) as caught:
                await source.poll(deliver)
        finally:
            await source.aclose()
        return str(caught.value)

    return asyncio.run(run())


def test_a_failed_poll_never_quotes_the_url() -> None:
    assert _poll(f"http://[::1/markets?apikey={KEY}") == "source venue: InvalidUrlClientError"
    refused = _poll(f"http://127.0.0.1:{free_port()}/markets?apikey={KEY}")
    assert refused.startswith("source venue: cannot connect ("), refused
    assert KEY not in refused
