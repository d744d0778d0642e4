"""RPC URLs as they may be shown: no user, password, query string or key-like path part.

`https://user:pw@eth.example:8545/v3/4f0c...9a?key=x` -> `https://eth.example:8545/v3/***`
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_SAFE_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,11}$")


def _safe_segment(segment: str) -> bool:
    """Empty, or a short word such as `rpc` or `v3`; anything else may be an API key."""
    if not segment:
        return True
    if not _SAFE_SEGMENT.match(segment):
        return False
    return len(segment) <= 3 or not any(c.isdigit() for c in segment)


def redact_url(url: str) -> str:
    """The URL with every part that could hold a credential replaced by `***`."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "***"
    if not parts.scheme or not parts.hostname:
        return "***"
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = ("***@" if parts.username or parts.password else "") + host
    if port is not None:
        netloc += f":{port}"
    segments = [s if _safe_segment(s) else "***" for s in parts.path.split("/")]
    path = "/".join(segments)
    query = "?***" if parts.query else ""
    return f"{parts.scheme}://{netloc}{path}{query}"
