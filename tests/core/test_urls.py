from __future__ import annotations

import pytest

from oracle.core import normalize_url


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
