"""Search providers against local servers speaking each provider's JSON (and RSS/Atom)."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import aiohttp
import pytest
from pydantic import TypeAdapter

from oracle.agents.http import retry_after_seconds
from oracle.agents.search import SearchHit
from oracle.agents.search.feeds import parse_feed
from oracle.agents.settings import SearchConfig
from oracle.app import build_search_provider
from oracle.errors import ConfigError, RateLimited, ToolError

from .fakes import Internet, serve

CONFIG: TypeAdapter[Any] = TypeAdapter(SearchConfig)


def search(
    config: dict[str, Any], internet: Internet | None = None, query: str = "election results"
) -> tuple[list[SearchHit], Internet]:
    internet = internet or Internet()

    async def main() -> list[SearchHit]:
        async with serve(internet), aiohttp.ClientSession() as session:
            document = {
                key: value.replace("{url}", internet.url) if isinstance(value, str) else value
                for key, value in config.items()
            }
            if "feeds" in document:
                document["feeds"] = [f.replace("{url}", internet.url) for f in document["feeds"]]
            provider = build_search_provider(
                CONFIG.validate_python(document), lambda: session, "agents[a].search[0]"
            )
            return await provider.search(query, 2)

    return asyncio.run(main()), internet


def test_tavily(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_TEST_KEY", "tvly-secret")
    hits, internet = search(
        {"kind": "tavily", "base_url": "{url}/tavily", "api_key_env": "TAVILY_TEST_KEY"}
    )
    assert [h.title for h in hits] == ["Candidate wins election", "Official certified results"]
    assert hits[0].published == "2024-11-06T10:00:00+00:00"
    assert hits[0].snippet == "Results are in."
    assert hits[0].provider == "tavily"
    request = internet.search_requests[0]
    assert request["auth"] == "Bearer tvly-secret"
    assert request["query"] == "election results"
    assert request["max_results"] == 2


def test_brave(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_TEST_KEY", "brave-secret")
    hits, internet = search(
        {
            "kind": "brave",
            "base_url": "{url}/brave/res/v1/web/search",
            "api_key_env": "BRAVE_TEST_KEY",
        }
    )
    assert len(hits) == 2
    assert hits[1].url.startswith("http://www.fec.gov:")
    assert internet.search_requests[0]["token"] == "brave-secret"
    assert internet.search_requests[0]["q"] == "election results"


def test_searxng() -> None:
    hits, internet = search({"kind": "searxng", "base_url": "{url}/searx"})
    assert hits[0].title == "Candidate wins election"
    assert internet.search_requests[0]["format"] == "json"


@pytest.mark.parametrize(
    "published",
    [
        "0001-01-01T00:00:00+14:00",  # before year 1 in UTC
        "9999-12-31T23:59:59-14:00",  # after year 9999 in UTC
        "99999999999999999999",
        "\x00",
    ],
)
def test_a_date_out_of_range_is_no_date(published: str) -> None:
    hits, _ = search(
        {"kind": "searxng", "base_url": "{url}/searx"}, Internet(searxng_published=published)
    )
    assert len(hits) == 2
    assert hits[0].published is None


def test_gdelt_json_served_as_html() -> None:
    hits, internet = search(
        {"kind": "gdelt", "base_url": "{url}/gdelt/api/v2/doc/doc", "timespan": "1w"}
    )
    assert hits[0].published == "2024-11-06T10:00:00+00:00"
    assert hits[0].snippet == "reuters.com United States"
    assert internet.search_requests[0]["mode"] == "ArtList"
    assert internet.search_requests[0]["timespan"] == "1w"


def test_rss_and_atom_feeds_are_searched_by_words() -> None:
    config = {"kind": "rss", "feeds": ["{url}/feeds/rss.xml", "{url}/feeds/atom.xml"]}
    hits, _ = search(config, query="certified official results")
    assert hits[0].title == "Official certified results"
    assert hits[0].published == "2024-11-06T10:00:00+00:00"
    assert all("<b>" not in h.snippet for h in hits)
    nothing, _ = search(config, query="zzz qqq")
    assert nothing == []


def test_a_feed_is_read_whole() -> None:
    # content.read(n) returned what one network read had: a 1.6 MB feed was cut off at
    # ~128 KB and reported as "not XML".
    hits, _ = search({"kind": "rss", "feeds": ["{url}/feeds/big.xml"]}, query="election")
    assert [hit.url for hit in hits] == ["https://last.example/"]


def test_a_feed_is_parsed_in_linear_time() -> None:
    # Stripping tags from a summary of 200,000 '<' took minutes, in the event loop.
    summary = "&lt;" * 200_000
    feed = f"<rss><channel><item><link>https://a.example/</link><description>{summary}"
    started = time.perf_counter()
    (hit,) = parse_feed(f"{feed}</description></item></channel></rss>".encode())
    assert time.perf_counter() - started < 2.0
    assert hit.snippet.startswith("<<<")


def test_feed_parser_rejects_non_xml() -> None:
    with pytest.raises(ToolError, match="not XML"):
        parse_feed(b"<html><body>oops")
    for encoding in ("idna", "undefined", "punycode", "utf-7", "base64"):
        declared = f'<?xml version="1.0" encoding="{encoding}"?><rss><item/></rss>'
        with pytest.raises(ToolError, match="not XML"):
            parse_feed(declared.encode())


def test_429_with_retry_after_is_retried() -> None:
    internet = Internet(search_failures={"searxng": [429]})
    hits, _ = search({"kind": "searxng", "base_url": "{url}/searx"}, internet)
    assert len(hits) == 2
    assert internet.hits["searxng"] == 2


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("2", 2.0),
        ("-5", 0.0),
        ("inf", math.inf),  # longer than any budget: the search fails at once
        ("nan", None),
        ("Mon, 01 Jan 99999 00:00:00 GMT", None),  # raised ValueError
        ("Thu, 01 Jan 1970 00:01:40 GMT", 100.0),
        ("\x00", None),
    ],
)
def test_retry_after_is_a_number_of_seconds_or_none(header: str, seconds: float | None) -> None:
    assert retry_after_seconds(header, now=0.0) == seconds


def test_429_beyond_the_budget_fails_with_a_clear_error() -> None:
    internet = Internet(search_failures={"searxng": [429, 429, 429]})
    with pytest.raises(RateLimited, match=r"searxng: rate limited \(429\)"):
        search({"kind": "searxng", "base_url": "{url}/searx", "max_retries": 1}, internet)


def test_http_errors_name_the_provider_but_never_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAVE_TEST_KEY", "brave-secret")
    internet = Internet(search_failures={"brave": [403]})
    with pytest.raises(ToolError) as caught:
        search(
            {
                "kind": "brave",
                "base_url": "{url}/brave/res/v1/web/search",
                "api_key_env": "BRAVE_TEST_KEY",
            },
            internet,
        )
    assert str(caught.value) == "brave: HTTP 403"


def test_a_missing_key_is_a_config_error_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(
        ConfigError,
        match=r"agents\[a\]\.search\[0\]\.api_key_env: environment variable NO_SUCH_KEY is not set",
    ):
        search({"kind": "tavily", "api_key_env": "NO_SUCH_KEY"})
    with pytest.raises(
        ConfigError, match=r"agents\[a\]\.search\[0\]: needs api_key_env or api_key_file"
    ):
        search({"kind": "tavily"})
