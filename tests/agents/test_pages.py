"""Page reading: extraction, charsets, and every way a page can be hostile or too big."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from oracle.agents.pages import GuardedResolver, Page, PageReader, address_allowed
from oracle.agents.settings import PageSettings
from oracle.errors import BlockedAddress, ToolError

from .fakes import LOCAL_NAMES, Internet, StaticResolver, serve

# Exactly the test server's address (and what StaticResolver maps test names to).
LOOPBACK = (ipaddress.ip_network("127.0.0.1/32"),)


def read(
    path: str,
    *,
    host: str = "127.0.0.1",
    settings: PageSettings | None = None,
    resolver: bool = True,
) -> Page:
    async def main(internet: Internet) -> Page:
        reader = PageReader(
            settings or PageSettings(allowed_networks=LOOPBACK, timeout_seconds=3),
            StaticResolver(LOCAL_NAMES) if resolver else None,
        )
        try:
            url = path if "://" in path else f"http://{host}:{internet.port}/pages/{path}"
            return await reader.fetch(url)
        finally:
            await reader.aclose()

    return run(main)


def run(main: Callable[[Internet], Awaitable[Any]]) -> Any:
    async def wrapper() -> Any:
        async with serve(Internet()) as internet:
            return await main(internet)

    return asyncio.run(wrapper())


def test_article_text_title_and_date_are_extracted() -> None:
    page = read("election", host="www.reuters.com")
    assert page.title == "Candidate wins election"
    assert page.published == "2024-11-06"
    assert "The candidate won the election" in page.text
    assert "Menu Home About" not in page.text  # boilerplate removed
    assert page.content_type == "text/html"


def test_declared_charset_is_used() -> None:
    page = read("latin1")
    assert "Bürgermeister eröffnete das Café" in page.text
    assert page.title == "Café in Zürich"


def test_meta_charset_is_used_when_the_header_has_none() -> None:
    page = read("cp1252-meta")
    assert "He said \u201cyes\u201d \u2013 na\u00efve." in page.text


@pytest.mark.parametrize(
    "name",
    [
        "charset-undefined",
        "charset-idna",
        "charset-punycode",
        "meta-undefined",
        "meta-idna",
        "meta-punycode",
        "meta-utf-7",
    ],
)
def test_a_charset_no_browser_knows_is_ignored(name: str) -> None:
    # Python has codecs of these names that raise on any input, or are no text encoding a
    # page can declare; a browser ignores such a label, and so does the reader.
    page = read(name)
    assert "Zürich is in Switzerland." in page.text


def test_urls_are_fetched_as_a_browser_reads_them() -> None:
    async def main(internet: Internet) -> Any:
        reader = PageReader(
            PageSettings(allowed_networks=LOOPBACK, timeout_seconds=3),
            StaticResolver(LOCAL_NAMES),
        )
        try:
            # A browser opens 127.0.0.1 here (a backslash ends the host); urllib read
            # www.fec.gov, and aiohttp refused the URL with a ValueError.
            with pytest.raises(ToolError) as caught:
                await reader.fetch(f"http://127.0.0.1:{internet.port}\\@www.fec.gov/pages/x")
            assert str(caught.value) == (
                f"http://127.0.0.1:{internet.port}/@www.fec.gov/pages/x: HTTP 404"
            )
            return await reader.fetch(f"HTTP://WWW.FEC.GOV:{internet.port}/pages/./election")
        finally:
            await reader.aclose()

    page = run(main)
    assert page.url.startswith("http://www.fec.gov:")
    assert page.url.endswith("/pages/election")


def test_a_malformed_redirect_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match=r"/pages/bad-location: the redirect's Location"):
        read("bad-location")


@pytest.mark.parametrize(
    "url", ["http://" + "a" * 64 + ".example/", "http://a..b/", "http://.example/"]
)
def test_a_host_name_no_resolver_can_encode_is_a_tool_error(url: str) -> None:
    with pytest.raises(ToolError, match="cannot resolve host"):
        read(url, settings=PageSettings(timeout_seconds=3), resolver=False)


def test_plain_text_is_read_as_is() -> None:
    assert read("plain").text.startswith("plain text page")


def test_other_content_types_are_refused() -> None:
    with pytest.raises(ToolError, match=r"content type application/pdf is not readable"):
        read("pdf")


def test_http_errors_are_reported() -> None:
    with pytest.raises(ToolError, match=r"/pages/missing: HTTP 404"):
        read("missing")


def test_redirects_are_followed_and_bounded() -> None:
    page = read("to-election")
    assert page.url.endswith("/pages/election")
    assert page.requested_url.endswith("/pages/to-election")
    settings = PageSettings(allowed_networks=LOOPBACK, max_redirects=3, timeout_seconds=3)
    with pytest.raises(ToolError, match=r"more than 3 redirects"):
        read("loop", settings=settings)


def test_a_50_mb_page_is_cut_off_at_the_cap() -> None:
    settings = PageSettings(allowed_networks=LOOPBACK, max_bytes=1_000_000, timeout_seconds=5)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"larger than the 1000000-byte cap"):
        read("huge", settings=settings)  # chunked: discovered while reading
    with pytest.raises(ToolError, match=r"larger than the 1000000-byte cap"):
        read("declared-huge", settings=settings)  # Content-Length: refused before reading
    assert time.monotonic() - started < 5


def test_a_trickling_server_is_cut_off_by_the_timeout() -> None:
    settings = PageSettings(allowed_networks=LOOPBACK, timeout_seconds=0.8)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0.8 s"):
        read("trickle", settings=settings)
    assert time.monotonic() - started < 3


def test_private_addresses_are_refused_by_default() -> None:
    production = PageSettings(timeout_seconds=3)
    # The test server itself is on loopback: refused without the test-only exemption.
    with pytest.raises(BlockedAddress, match=r"resolves to 127\.0\.0\.1"):
        read("election", settings=production)
    # A real name that resolves to loopback, through the system resolver.
    with pytest.raises(BlockedAddress, match=r"localhost resolves to"):
        read("http://localhost:9/x", settings=production, resolver=False)
    for literal in (
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
    ):
        with pytest.raises(BlockedAddress):
            read(literal, settings=production)


def test_a_name_resolving_to_a_private_address_is_refused() -> None:
    settings = PageSettings(allowed_networks=LOOPBACK, timeout_seconds=3)
    with pytest.raises(BlockedAddress, match=r"intranet\.example resolves to 10\.1\.2\.3"):
        read("http://intranet.example/secret", settings=settings)
    # One private address among several is enough to refuse.
    with pytest.raises(BlockedAddress, match=r"192\.168\.1\.20"):
        read("election", host="mixed.example", settings=settings)


def test_a_redirect_to_a_private_address_is_refused() -> None:
    settings = PageSettings(allowed_networks=LOOPBACK, timeout_seconds=3)
    with pytest.raises(BlockedAddress, match=r"intranet\.example resolves to 10\.1\.2\.3"):
        read("to-private", settings=settings)


CARRYING_PRIVATE = [
    "64:ff9b::a00:1",  # NAT64 (well-known prefix) of 10.0.0.1
    "64:ff9b::7f00:1",  # ... of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # ... of 169.254.169.254, the cloud metadata service
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "::ffff:0:a00:1",  # SIIT (IPv4-translated) of 10.0.0.1
    "::ffff:0:7f00:1",
    "::ffff:10.0.0.1",  # IPv4-mapped
    "::a00:1",  # IPv4-compatible (deprecated) of 10.0.0.1
    "::7f00:1",
    "::a9fe:a9fe",
]
REFUSED_WHATEVER_THEY_CARRY = [
    "::808:808",  # IPv4-compatible: ::/8 is reserved, whatever it carries
    "::1:0:0:1",  # elsewhere in ::/8
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo (2001::/32): through a relay
    "2001::a00:1",
    "64:ff9b:1::a00:1",  # local-use NAT64 (RFC 8215): a site's own translator
]
CARRYING_PUBLIC = [
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
    "::ffff:0:808:808",  # SIIT of 8.8.8.8
    "::ffff:8.8.8.8",
    "2606:4700:4700::1111",  # plain global unicast
]


@pytest.mark.parametrize("literal", CARRYING_PRIVATE + REFUSED_WHATEVER_THEY_CARRY)
def test_ipv6_that_carries_a_private_ipv4_address_or_is_reserved_is_refused(
    literal: str,
) -> None:
    assert not address_allowed(ipaddress.ip_address(literal), PageSettings())
    # The guard every fetch goes through (a literal needs no DNS, so nothing is sent).
    with pytest.raises(BlockedAddress, match="refused"):
        asyncio.run(GuardedResolver(PageSettings()).resolve(f"[{literal}]", 80))


@pytest.mark.parametrize("literal", CARRYING_PUBLIC)
def test_ipv6_that_carries_a_public_ipv4_address_is_judged_by_it(literal: str) -> None:
    assert address_allowed(ipaddress.ip_address(literal), PageSettings())


def test_an_allowed_network_allows_the_address_it_carries() -> None:
    settings = PageSettings(allowed_networks=(ipaddress.ip_network("10.0.0.1/32"),))
    assert address_allowed(ipaddress.ip_address("64:ff9b::a00:1"), settings)
    assert not address_allowed(ipaddress.ip_address("64:ff9b::a00:2"), settings)


def test_only_an_explicit_setting_allows_private_addresses() -> None:
    assert not address_allowed(ipaddress.ip_address("192.168.0.1"), PageSettings())
    assert address_allowed(ipaddress.ip_address("93.184.216.34"), PageSettings())
    assert address_allowed(
        ipaddress.ip_address("192.168.0.1"), PageSettings(allow_private_addresses=True)
    )
    assert PageSettings().allow_private_addresses is False
    assert PageSettings().allowed_networks == ()


def test_other_schemes_are_refused() -> None:
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x"):
        with pytest.raises(ToolError, match=r"not an absolute http\(s\) URL"):
            read(url)
