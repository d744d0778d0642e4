from __future__ import annotations

import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oracle.core import normalize_url, urls


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("HTTPS://Example.COM/a/b", "https://example.com/a/b"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/a?utm_source=x&utm_medium=y&id=7", "https://example.com/a?id=7"),
        ("https://example.com/a?fbclid=1&gclid=2&b=2&a=1", "https://example.com/a?a=1&b=2"),
        ("https://example.com/a?UTM_Campaign=z", "https://example.com/a"),
        ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("https://user:secret@example.com/a", "https://example.com/a"),
        ("https://[::1]:443/a", "https://[::1]/a"),
        # As a browser reads them (the WHATWG URL standard):
        ("http://blog.example\\@www.sec.gov/x", "http://blog.example/@www.sec.gov/x"),
        ("http://0x7f.1/a", "http://127.0.0.1/a"),
        ("http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/"),
        ("https://Bücher.example/a", "https://xn--bcher-kva.example/a"),
        ("https://example.com/a/./b/../c", "https://example.com/a/c"),
        ("https:///example.com/a", "https://example.com/a"),
        ("https://exa\tmple.com/a", "https://example.com/a"),
    ],
)
def test_normalize(raw: str, normalized: str) -> None:
    assert normalize_url(raw) == normalized


def test_path_case_is_kept() -> None:
    assert normalize_url("https://example.com/Report") != normalize_url(
        "https://example.com/report"
    )


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("example.com/a", "not an absolute http(s) URL"),
        ("ftp://example.com/a", "not an absolute http(s) URL"),
        ("https://", "not a valid URL"),
        ("https://example.com:99999/", "not a valid URL"),
        ("https://exa mple.com/", "not a valid URL"),
        ("http://[::1/", "not a valid URL"),
        ("https://a\ud800.example/", "not a valid URL"),
        ("https://example.com/" + "a" * 16_384, "longer than 16384 characters"),
    ],
)
def test_rejects(raw: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        normalize_url(raw)


# URLs near the parser-free form (oracle.core.urls._PLAIN_URL): labels, digits, hyphens, dots,
# the path's punctuation, dot segments, and what must send a URL to the parser instead.
_host_parts = st.sampled_from(
    ["a", "b", "z", "0", "9", "-", ".", "xn--", "0x", "1", "ab", "example", "com", "A", "é"]
)
_path_parts = st.sampled_from(
    [
        "/", "a", "Z", "0", ".", "..", "-", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+",
        ",", ";", "=", ":", "@", "%2e", "%2F", "^", "|", "\\", " ", "\t", "?", "#", "`", "{",
        "é", "[", "]", '"', "<",
    ]
)  # fmt: skip
_urls = st.builds(
    lambda scheme, host, path: f"{scheme}://{''.join(host)}{''.join(path)}",
    st.sampled_from(["http", "https", "HTTP", "ftp"]),
    st.lists(_host_parts, min_size=1, max_size=8),
    st.lists(_path_parts, max_size=12),
)


@settings(max_examples=3000, deadline=None)
@given(_urls)
@example("https://a.b-c.example/x/./y")
@example("https://1.2.3.4/a")
@example("https://a.0x1/a")
@example("https://news.example//a///")
def test_the_parser_free_form_reads_as_the_parser_does(url: str) -> None:
    """Where `normalize_url` skips the WHATWG parser, the parser gives the same form."""
    try:
        expected: str | None = urls._normalize_parsed(url)
    except ValueError:
        expected = None
    if urls._PLAIN_URL.fullmatch(url) is None:
        return
    assert expected is not None
    assert urls.normalize_url.__wrapped__(url) == expected


def test_most_source_urls_need_no_parser() -> None:
    assert urls._PLAIN_URL.fullmatch("https://www.sec.gov/news/press-release/2024-1")
    assert not urls._PLAIN_URL.fullmatch("https://www.sec.gov/a?b=1")


def test_the_parser_free_form_is_judged_in_linear_time() -> None:
    """Near misses as long as a URL may be (a backtracking pattern would take minutes)."""
    assert normalize_url("https://" + "a-" * 8_000 + "a.example/x").endswith(".example/x")
    start = time.perf_counter()
    for near_miss in ("a" * 16_000 + "!", "a-" * 8_000 + "!", "a." * 8_000 + "-", "a1" * 8_000):
        assert urls._PLAIN_URL.fullmatch(f"https://{near_miss}/b?") is None
    assert time.perf_counter() - start < 2.0


@settings(max_examples=1500, deadline=None)
@given(st.lists(_urls | st.sampled_from(["https://a.example/x", "https://a.example/"]), max_size=6))
@example(["https://a.example/x", "https://b.example/y/"])
@example(["https://a.example/x\nhttps://b.example/y"])
@example(["https://a.example/.", "https://a.example/x/.."])
@example(["https://" + "a" * 16_400 + ".example/x"])
def test_many_urls_are_normalized_as_each_alone(many: list[str]) -> None:
    """`normalize_urls` (one match for all, when all are already normal) gives each URL's
    `normalize_url`, or refuses as `normalize_url` refuses the first it cannot read."""
    distinct = list(dict.fromkeys(many))
    expected: dict[str, str] | str
    try:
        expected = {url: urls.normalize_url.__wrapped__(url) for url in distinct}
    except ValueError as error:
        expected = str(error)
    try:
        got: dict[str, str] | str = urls.normalize_urls(distinct)
    except ValueError as error:
        got = str(error)
    assert got == expected


@settings(max_examples=3000, deadline=None)
@given(st.lists(_urls | st.sampled_from(["https://a.example/x", "https://a.example/"]), max_size=4))
@example(["https://a.example/.a", "https://a.example/..a/...", "https://a.example//x"])
@example(["https://a.example/x/./y", "https://a.example/x/../y", "https://a.example/x/.."])
@example(["https://a.example/.", "https://a.example/x/", "https://a.example", "https://a.1/x"])
@example(["https://a.example/x\ud800"])
@example(["https://a.example/" + "a" * urls.MAX_URL_CHARS])  # too long to be a page's
@example(["https://a.example/x", "https://a.example/" + "a" * urls.MAX_URL_CHARS])
@example([f"https://a.example/{i}" + "a" * (urls.MAX_URL_CHARS // 2) for i in range(3)])
def test_urls_are_in_their_normal_form_exactly_when_each_is(many: list[str]) -> None:
    """The one match over all the URLs (its own engine, no look-around) says yes exactly
    when each URL is read without the parser and is its own normalized form."""
    distinct = list(dict.fromkeys(many))

    def normal(url: str) -> bool:
        if "\n" in url or urls._PLAIN_URL.fullmatch(url) is None:
            return False
        if len(url) > urls.MAX_URL_CHARS:
            return False
        return urls.normalize_url.__wrapped__(url) == url

    assert urls.in_normal_form(distinct) == (bool(distinct) and all(map(normal, distinct)))
    for url in distinct:
        assert urls.in_normal_form([url]) == normal(url), url
