"""URLs: normalization, so two spellings of the same page count as one source; redaction,
so a URL can be shown without the credentials it may carry.

Normalization:
Applied: scheme and host lower-cased, default ports dropped, empty path read as `/`,
trailing slash dropped from other paths, fragment dropped, tracking parameters
(`utm_*` and the click identifiers below) removed, remaining query parameters sorted,
percent-escapes upper-cased, and any `user:password@` dropped so credentials never reach
a proof. Not applied: `www.` stripping or path case folding,
because those can name different resources.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
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


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in _TRACKING_PARAMETERS or lowered.startswith(_TRACKING_PREFIXES)


def _upper_escapes(text: str) -> str:
    return _PERCENT_ESCAPE.sub(lambda match: match.group(0).upper(), text)


@lru_cache(maxsize=65536)
def normalize_url(url: str) -> str:
    """The canonical form of an absolute http(s) URL; ValueError names what is wrong."""
    stripped = url.strip()
    try:
        parts = urlsplit(stripped)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"not a valid URL ({error})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError("not an absolute http(s) URL")
    host = (parts.hostname or "").lower()
    if not host:
        raise ValueError("URL has no host")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
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
    """Whether `url` is an absolute http(s) URL with a host (and a valid port, if any)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises on a bad port
    except ValueError:
        return False
    return parts.scheme in _DEFAULT_PORTS and bool(parts.hostname)


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
