"""Configured secrets never leave the process: every outside source echoes them (model
servers in redirects and errors, search providers in 200 bodies and results, pages in
text, headers and redirects, data endpoints in values and error bodies), and a full daemon
pass leaves none in any log record of any logger (at DEBUG), in what the models were
sent, in a proof, in the database file or in /metrics."""

from __future__ import annotations

import json
import logging
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import generate_latest

from oracle.config import Settings
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.scrub import SCRUBBER
from tests.daemon.test_pipeline import Venue, market, one_pass, run
from tests.daemon.test_pipeline import serve as serve_venue

from .fakes import Internet, answer, article, cite, raw, serve, status, text, tools

QUESTION = "Will BTC be above $100,000 after the candidate won the election?"
MODEL_KEY = f"sk-model-{uuid.uuid4().hex}"
SEARCH_KEY = f"tvly-search-{uuid.uuid4().hex}"
DATA_KEY = f"data-key-{uuid.uuid4().hex}"
VENUE_TOKEN = f"venue-token-{uuid.uuid4().hex}"
SECRETS = (MODEL_KEY, SEARCH_KEY, DATA_KEY, VENUE_TOKEN)
ECHO = " ".join(SECRETS)


class LeakyInternet(Internet):
    """The fakes' internet, plus servers that echo every secret back."""

    def app(self) -> web.Application:
        app = super().app()
        app.router.add_post("/leaky-tavily/search", self.tavily_text)
        app.router.add_get("/leaky-brave/res/v1/web/search", self.brave_echo)
        app.router.add_get("/leaky/{name}", self.leaky_page)
        app.router.add_get("/leaky-data/{name}", self.leaky_data)
        return app

    async def tavily_text(self, _: web.Request) -> web.Response:
        # A 200 that is not JSON, quoting the key it was sent.
        return web.Response(
            text=f"Unauthorized key {SEARCH_KEY} for plan", content_type="text/plain"
        )

    async def brave_echo(self, request: web.Request) -> web.Response:
        token = request.headers.get("X-Subscription-Token", "")
        results = [
            {
                "title": f"Candidate wins election ({token})",
                "url": f"{self.url}/leaky/echo?key={token}",
                "description": f"Results are in. Your key: {ECHO}",
                "page_age": "2024-11-06T10:00:00",
            },
            {
                "title": "Moved",
                "url": f"{self.url}/leaky/moved",
                "description": "moved",
                "page_age": "2024-11-06T10:00:00",
            },
        ]
        return web.json_response({"type": "search", "web": {"type": "search", "results": results}})

    async def leaky_page(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name == "moved":  # a redirect whose Location carries the keys
            raise web.HTTPFound(f"/leaky/gone?token={MODEL_KEY}&k={SEARCH_KEY}")
        if name == "gone":
            return web.Response(status=404, text=f"no page for {ECHO}")
        return web.Response(
            text=article(f"Echo {ECHO}", f"The candidate won the election. Keys: {ECHO}."),
            content_type="text/html",
            headers={"X-Echo": ECHO},
        )

    async def leaky_data(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        key = request.headers.get("X-Api-Key", "")
        if name == "value":  # the value quotes the key
            return web.json_response({"price": f"bad key {key}"})
        if name == "error":
            return web.Response(status=200, text=f"not json, key {key}", content_type="text/html")
        return web.json_response({"price": 101500})


def llm_agent(name: str, model: str, internet: Internet) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "llm",
        "api": "openai",
        "base_url": f"{internet.url}/v1",
        "model": model,
        "api_key_env": "LEAK_MODEL_KEY",
        "max_retries": 0,
        "request_timeout_seconds": 10,
        "search": [
            {"kind": "tavily", "base_url": f"{internet.url}/leaky-tavily", "max_retries": 0,
             "api_key_env": "LEAK_SEARCH_KEY"},
            {"kind": "brave", "base_url": f"{internet.url}/leaky-brave", "max_retries": 0,
             "api_key_env": "LEAK_SEARCH_KEY"},
        ],
        "pages": {"allowed_networks": ["127.0.0.1/32"], "timeout_seconds": 5},
        "budget": {"wall_seconds": 30, "answer_reserve_seconds": 3},
    }  # fmt: skip


def researches(internet: Internet) -> list[Any]:
    """Search (one provider's 200 body quotes the key, the other's results do), open the
    echoing page, the redirect that carries the keys, and answer echoing them all."""
    echo = f"{internet.url}/leaky/echo"
    return [
        tools(("search", {"query": f"election {MODEL_KEY}"})),
        tools(
            ("open_page", {"url": echo}),
            ("open_page", {"url": f"{internet.url}/leaky/moved"}),
        ),
        text(f"Read it: {ECHO}"),
        answer(
            "YES",
            0.9,
            [cite(echo, "The candidate won the election"), cite(f"{echo}?key={SEARCH_KEY}")],
            reasoning=f"The page says so; it also printed {ECHO}",
        ),
    ]


def settings(tmp_path: Path, venue: Venue, nets: list[Internet]) -> Settings:
    data_url = f"{nets[0].url}/leaky-data"
    return Settings(
        database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        daemon={"proofs_dir": str(tmp_path / "proofs"), "retry_backoff": 0},
        metrics={"enabled": False},
        sources={"min_total": 1, "min_categories": 1, "min_official": 0, "min_news": 0},
        consensus={"min_model_families": 1},
        agents=[
            llm_agent("alpha", "gpt-4.1-mini", nets[0]),
            llm_agent("beta", "llama-3.3-70b", nets[1]),
            llm_agent("gamma", "mistral-large-2", nets[2]),
            {
                "name": "prices",
                "kind": "data",
                "max_retries": 0,
                "rules": [
                    {
                        "question_pattern": r"BTC be above \$(?P<threshold>[\d,]+)",
                        "min_values": 1,
                        "endpoints": [
                            {"name": n, "url": f"{data_url}/{n}", "path": "price",
                             "api_key_env": "LEAK_DATA_KEY", "api_key_header": "X-Api-Key"}
                            for n in ("value", "error", "good")
                        ],
                    }
                ],
            },
        ],
        market_sources=[
            {
                "name": "venue",
                "kind": "http",
                "url": f"{venue.url}/markets",
                "result_url": f"{venue.url}/results",
                "items_path": "data.markets",
                "headers": {"Authorization": f"Bearer {VENUE_TOKEN}"},
            }
        ],
    )  # fmt: skip


def test_no_configured_secret_leaves_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("LEAK_MODEL_KEY", MODEL_KEY)
    monkeypatch.setenv("LEAK_SEARCH_KEY", SEARCH_KEY)
    monkeypatch.setenv("LEAK_DATA_KEY", DATA_KEY)
    caplog.set_level(logging.DEBUG)  # every logger, every level
    nets = [LeakyInternet() for _ in range(3)]
    metrics = DaemonMetrics()

    async def scenario() -> tuple[Venue, Settings]:
        async with AsyncExitStack() as stack:
            for internet in nets:
                await stack.enter_async_context(serve(internet))
            nets[0].openai.script = researches(nets[0])
            nets[1].openai.script = researches(nets[1])
            # A model server that redirects with its key in the Location, then answers
            # with an error quoting the key.
            error = {"error": {"message": f"Incorrect API key {MODEL_KEY}", "type": "auth"}}
            nets[2].openai.script = [
                status(307, Location=f"/v1/chat/completions?key={MODEL_KEY}"),
                raw(json.dumps(error), 401),
            ]
            markets = [{"id": "btc", "question": QUESTION, "resolve_after": 100}]
            venue = await stack.enter_async_context(serve_venue(Venue(markets)))
            configured = settings(tmp_path, venue, nets)
            await one_pass(configured, metrics)
            return venue, configured

    venue, configured = run(scenario)
    # The pass did its work: three answered YES (gamma failed), and it was submitted.
    assert market(configured, "venue:btc").state == MarketState.FINAL
    assert [(a["market_id"], a["outcome"]) for a in venue.answers] == [("btc", "YES")]
    places: dict[str, str] = {}
    # Every log record of every logger: message, arguments, traceback, fields.
    places["log"] = caplog.text + "".join(
        f"{r.getMessage()} {r.exc_text or ''} {r.__dict__}" for r in caplog.records
    )
    # What the models were sent (tool results and tool errors).
    places["models"] = json.dumps([n.openai.requests for n in nets])
    # Proofs, the database, anything else the daemon wrote.
    for path in tmp_path.rglob("*"):
        if path.is_file():
            places[str(path)] = path.read_bytes().decode("utf-8", "replace")
    places["metrics"] = generate_latest(metrics.registry).decode()
    assert any(p.endswith(".json") and "proofs" in p for p in places)
    assert "oracle.db" in " ".join(places)
    leaks = [
        (where, content[max(0, content.index(s) - 150) : content.index(s) + 20])
        for where, content in places.items()
        for s in SECRETS
        if s in content
    ]
    assert leaks == []
    # And the scrubbing is what kept them out: the redacted marks are where they were.
    assert "[redacted]" in places["models"]
    assert "[redacted]" in places["log"]
    assert SCRUBBER.active
