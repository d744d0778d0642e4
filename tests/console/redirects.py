"""Redirect targets after sign-in: those a browser would read as another site (or rewrite
on the way: tab, newline, backslash, dot segments, look-alike slashes), and paths that
stay on the console as a browser reads them."""

from __future__ import annotations

HOSTILE_NEXT = (
    "//evil.example/",
    "/\\evil.example/",
    "/\t/evil.example/",
    "/\n/evil.example/",
    "/\r\n/evil.example/",
    "\\\\evil.example/",
    "\\/evil.example/",
    "https://evil.example/",
    "http:evil.example",
    "javascript:alert(document.cookie)",
    "/ /evil.example/",
    " //evil.example/",
    "/..//evil.example/",
    "/%2e%2e//evil.example/",
    "/x/.%2E//evil.example/",
    "%2F%2Fevil.example/",  # as typed: not a path
    "\uff0f\uff0fevil.example/",  # fullwidth solidus
    "/\u2215evil.example/",  # division slash
    "",
)
# As sent, the value the console redirects to: percent-encoding stays a path segment.
LOCAL_NEXT = {
    "/": "/",
    "/reviews/1?status=all": "/reviews/1?status=all",
    "/%09/evil.example/": "/%09/evil.example/",
    "/%2F%2Fevil.example/": "/%2F%2Fevil.example/",
    "/approvals#//evil.example": "/approvals#//evil.example",
}
