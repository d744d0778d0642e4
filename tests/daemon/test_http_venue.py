"""The HTTP venue's failures name the source and the reason, never the venue's URL (which
may carry its API key) nor its configured headers; a 4xx refusal is one for good."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from pydantic import SecretStr

from oracle.daemon.ports import MarketRef
from oracle.devchain import free_port
from oracle.errors import ResolverError, SourceError
from oracle.venues.http.settings import HttpSourceConfig
from oracle.venues.http.venue import HttpMarketSource, WebhookResolver

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


def _refusal(status: int, body: str, headers: dict[str, str]) -> ResolverError:
    """What the result webhook's `status` answer (with `body`) raises."""

    async def results(_: web.Request) -> web.Response:
        return web.Response(status=status, text=body)

    async def run() -> ResolverError:
        app = web.Application()
        app.router.add_post("/results", results)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        config = HttpSourceConfig(
            name="venue",
            kind="http",
            url=f"http://127.0.0.1:{port}/markets",
            result_url=f"http://127.0.0.1:{port}/results",
            headers={k: SecretStr(v) for k, v in headers.items()},
        )
        resolver = WebhookResolver(config)
        market = MarketRef("venue:m", "venue", "m", ("YES", "NO"), {}, {})
        try:
            with pytest.raises(ResolverError) as caught:
                await resolver.propose(market, "YES", "ab" * 32)
        finally:
            await resolver.aclose()
            await runner.cleanup()
        return caught.value

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (403, False),
        (404, False),
        (409, False),
        (422, False),
        (408, True),
        (425, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
    ],
)
def test_a_refusal_for_good_is_not_retryable(status: int, retryable: bool) -> None:
    error = _refusal(status, "no", {})
    assert error.retryable is retryable
    assert str(error) == f"source venue: result webhook answered HTTP {status}: no"


def test_a_refusal_quotes_the_start_of_the_answer_with_the_headers_masked() -> None:
    token = "tok-" + "9" * 30
    body = f"denied for Bearer {token} and key   {KEY}\n" + "x" * 5_000
    error = _refusal(400, body, {"Authorization": f"Bearer {token}", "X-Api-Key": KEY})
    text = str(error)
    assert text.startswith(
        "source venue: result webhook answered HTTP 400: denied for *** and key ***"
    )
    assert token not in text
    assert KEY not in text
    assert text.endswith("x...")
    assert len(text) < 400  # MAX_REFUSAL_CHARS of the answer, not all of it
    # An empty answer: the status alone.
    assert str(_refusal(404, "", {})) == "source venue: result webhook answered HTTP 404"
