"""URLs as a browser reads them; their normalization, so two spellings of the same page
count as one source; and their redaction, so a URL can be shown without the credentials
it may carry.

Every URL from outside is parsed by the WHATWG URL standard (the `ada-url` parser),
because a browser, and so the page a URL names, follows it and not RFC 3986 or urllib:
`http://blog.example\\@www.sec.gov/x` is blog.example (a backslash ends the host),
`http://0x7f.1/` is 127.0.0.1, tabs and newlines are dropped, hosts are IDNA-encoded and
dot segments resolved. The page reader fetches the URL it classifies by, so the two
cannot disagree.

Normalization then: default ports dropped, empty path read as `/`, trailing slash
dropped from other paths, fragment dropped, tracking parameters (`utm_*` and the click
identifiers below) removed, remaining query parameters sorted, percent-escapes
upper-cased, and any `user:password@` dropped so credentials never reach a proof. Not
applied: `www.` stripping or path case folding, because those can name different
resources.

Redaction (`redact_url`, for any scheme: RPC, database and venue URLs alike) keeps the
scheme, host, port and plain path words, and masks user info, the query and key-like path
segments.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ada_url import URL as _WhatwgUrl
from pydantic_core import SchemaValidator, core_schema

_DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_URL_CHARS = 16_384
_TRACKING_PARAMETERS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "ref_src",
        "spm",
    }
)
_TRACKING_PREFIXES = ("utm_", "pk_", "mtm_")
_PERCENT_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_SAFE_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,11}$")
_SCHEME = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*:")
# An absolute http(s) URL that a browser reads exactly as written, so that its normalized
# form needs no parser: lower-case scheme; a host of lower-case ASCII labels joined by single
# hyphens (so no IDNA label), the last beginning with a letter (so never read as an IPv4
# address); no user, port, query or fragment; a path of characters the WHATWG parser keeps
# as they are, with no percent-escape (and, checked after the match, no `.` or `..`
# segment). Most sources' URLs are such; `tests/core/test_urls.py` holds `normalize_url`
# equal to the parser's reading on them. Possessive, and each label's dot after it, so no
# character is read twice: the match costs a third of a backtracking one's time, and every
# source's URL is matched once per input.
_LABEL = r"[a-z0-9]++(?:-[a-z0-9]++)*+"
_PLAIN_URL = re.compile(
    rf"(https?)://((?:{_LABEL}\.)*+[a-z][a-z0-9]*+(?:-[a-z0-9]++)*+)"
    r"((?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]*+)*+)"
)

# `_PLAIN_URL` already in its normal form (`normalize_url` returns it as it is): a path of
# `/` alone, or of segments neither `.` nor `..` and not ending in `/`. Matched against many
# URLs at once, one a line (`normalize_urls`), by pydantic-core's Rust engine (a finite
# automaton: each character read once, a quarter of the time of `re` on the same lines), so
# with no look-around: a segment other than `.` and `..` is one beginning with a character
# but `.`, or `.` then one but `.`, or `..` then at least one character.
_RUST_PLAIN_CHARS = r"[A-Za-z0-9\-\._\~!\$\&'\(\)\*\+,;=:@]"
_RUST_PLAIN_BUT_DOT = r"[A-Za-z0-9\-_\~!\$\&'\(\)\*\+,;=:@]"
_NOT_DOTS = (
    rf"(?:{_RUST_PLAIN_BUT_DOT}{_RUST_PLAIN_CHARS}*|\.{_RUST_PLAIN_BUT_DOT}{_RUST_PLAIN_CHARS}*"
    rf"|\.\.{_RUST_PLAIN_CHARS}+)"
)
_RUST_LABEL = r"[a-z0-9]+(?:-[a-z0-9]+)*"
_NORMAL_URL = (
    rf"https?://(?:{_RUST_LABEL}\.)*[a-z][a-z0-9]*(?:-[a-z0-9]+)*"
    rf"(?:/|(?:/{_NOT_DOTS}?)*/{_NOT_DOTS})"
)
# `\A` and `\z`: the engine searches; these make it match all the lines, and only them.
_NORMAL_URL_LINES = rf"\A(?:{_NORMAL_URL}\n)*{_NORMAL_URL}\z"


@cache
def _normal_url_lines() -> SchemaValidator:
    # Compiled on first use: most commands read no URL.
    return SchemaValidator(core_schema.str_schema(pattern=_NORMAL_URL_LINES))


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_PARAMETERS or lowered.startswith(_TRACKING_PREFIXES)


def _upper_escapes(text: str) -> str:
    return _PERCENT_ESCAPE.sub(lambda match: match.group(0).upper(), text)


@dataclass(frozen=True)
class WebUrl:
    """An absolute http(s) URL as a browser reads it."""

    href: str  # the WHATWG serialization: what a browser requests
    scheme: str  # http or https
    host: str  # IDNA-encoded name, dotted IPv4, or IPv6 in brackets
    port: int | None  # None for the scheme's default
    path: str
    query: str  # without the `?`

    @property
    def hostname(self) -> str:
        """The host without an IPv6 literal's brackets: what a resolver is asked."""
        return self.host[1:-1] if self.host.startswith("[") else self.host


@lru_cache(maxsize=65536)
def parse_web_url(url: str, base: str | None = None) -> WebUrl:
    """`url` (relative to `base`, if given) as a browser reads it; ValueError when it is not
    an absolute http(s) URL."""
    if len(url) > MAX_URL_CHARS:  # no page's address; and the caches would hold it
        raise ValueError(f"longer than {MAX_URL_CHARS} characters")
    try:
        parsed = _WhatwgUrl(url, base) if base is not None else _WhatwgUrl(url)
    except ValueError:  # also UnicodeEncodeError: a lone surrogate
        if base is None and not _SCHEME.match(url):
            raise ValueError("not an absolute http(s) URL") from None
        raise ValueError("not a valid URL") from None
    scheme = parsed.protocol.removesuffix(":")
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("not an absolute http(s) URL")
    if not parsed.hostname:  # (the standard gives every http(s) URL a host)
        raise ValueError("URL has no host")
    return WebUrl(
        href=parsed.href,
        scheme=scheme,
        host=parsed.hostname,
        port=int(parsed.port) if parsed.port else None,
        path=parsed.pathname,
        query=parsed.search.removeprefix("?"),
    )


@lru_cache(maxsize=65536)
def normalize_url(url: str) -> str:
    """The canonical form of an absolute http(s) URL; ValueError names what is wrong."""
    plain = _PLAIN_URL.fullmatch(url) if len(url) <= MAX_URL_CHARS else None
    if plain is None:
        return _normalize_parsed(url)
    scheme, host, path = plain.groups()
    if "/." in path and _has_dot_segment(path):
        return _normalize_parsed(url)
    if path == "/" or path[-1:] not in ("/", ""):
        return url  # already in its normal form: the pattern matched all of it
    if len(path) > 1:
        path = path.rstrip("/")
    return f"{scheme}://{host}{path or '/'}"


def normalize_urls(urls: Collection[str]) -> dict[str, str]:
    """`{url: normalize_url(url)}` for every URL in `urls`, raising as `normalize_url` does
    for the first it refuses. Commonly every URL is already in its normal form, and one
    match over all of them, one a line, says so (a fifth of the time of one `normalize_url`
    each; the caches are then not used)."""
    if in_normal_form(urls):
        return dict(zip(urls, urls, strict=True))
    return {url: normalize_url(url) for url in urls}


def in_normal_form(urls: Collection[str]) -> bool:
    """Whether every URL in `urls` (at least one) is valid and its own normal form
    (`normalize_url(url) == url`), by one match over them all, one a line; False says
    only that some may not be."""
    lines = "\n".join(urls)
    return bool(
        urls
        and lines.count("\n") == len(urls) - 1  # no URL holds a newline
        # (No URL is longer than all of them together: most often none need be measured.)
        and (len(lines) <= MAX_URL_CHARS or max(map(len, urls)) <= MAX_URL_CHARS)
        and _normal_url_lines().isinstance_python(lines)
    )


def _has_dot_segment(path: str) -> bool:
    """Whether `path` has a `.` or `..` segment, which the parser resolves."""
    ended = path + "/"
    return "/./" in ended or "/../" in ended


def _normalize_parsed(url: str) -> str:
    """`normalize_url` through the WHATWG parser: any URL."""
    parts = parse_web_url(url)
    scheme, host, port = parts.scheme, parts.host, parts.port
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _upper_escapes(parts.path) or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query_pairs = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_tracking(name)
    ]
    query = urlencode(sorted(query_pairs))
    return urlunsplit((scheme, netloc, path, query, ""))


def is_http_url(url: str) -> bool:
    """Whether `url` is an absolute http(s) URL with a host, as a browser reads it."""
    try:
        parse_web_url(url)
    except ValueError:
        return False
    return True


def _safe_segment(segment: str) -> bool:
    """Empty, or a short word such as `rpc` or `v3`; anything else may be an API key."""
    if not segment:
        return True
    if not _SAFE_SEGMENT.match(segment):
        return False
    return len(segment) <= 3 or not any(c.isdigit() for c in segment)


def redact_url(url: str) -> str:
    """The URL as logs, error messages and `oracle config check` show it: scheme, host, port
    and plain path words kept; user info, the query and key-like path segments `***`.

    `https://user:pw@eth.example:8545/v3/4f0c...9a?key=x` -> `https://***@eth.example:8545/v3/***?***`.
    A SQLite URL keeps its path, which names a file rather than holding a credential.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "***"
    if not parts.scheme:
        return "***"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = ("***@" if "@" in parts.netloc else "") + host
    if port is not None:
        netloc += f":{port}"
    if parts.scheme == "sqlite" or parts.scheme.startswith("sqlite+"):
        path = parts.path
    else:
        path = "/".join(s if _safe_segment(s) else "***" for s in parts.path.split("/"))
    query = "?***" if parts.query else ""
    return f"{parts.scheme}://{netloc}{path}{query}"
