"""The console's audit chain, pure: each entry's hash is the SHA-256 of the RFC 8785
canonical JSON of the entry without its hash, and names the hash of the entry before it,
so changing, removing or reordering any entry breaks every hash after it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import rfc8785

GENESIS = "0" * 64
FIELDS = ("id", "at", "actor", "action", "subject", "details", "prev_hash")


def entry_hash(entry: Mapping[str, Any]) -> str:
    """The hash of an entry: its fields (without `hash`) in RFC 8785 canonical JSON."""
    missing = [name for name in FIELDS if name not in entry]
    if missing:
        raise ValueError(f"audit entry lacks {', '.join(missing)}")
    body = {name: entry[name] for name in FIELDS}
    return hashlib.sha256(rfc8785.dumps(body)).hexdigest()


def chain_problems(entries: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every break in a chain given oldest first: an entry whose hash is not its own, or
    whose `prev_hash` is not the hash of the entry before it. Empty: the chain holds."""
    problems: list[str] = []
    previous = GENESIS
    expected_id: int | None = None
    for entry in entries:
        ident = entry.get("id")
        if expected_id is not None and ident != expected_id:
            problems.append(f"entry {ident}: follows entry {expected_id - 1} (a gap or reorder)")
        if entry.get("prev_hash") != previous:
            problems.append(f"entry {ident}: prev_hash does not match the entry before it")
        try:
            actual = entry_hash(entry)
        except (ValueError, TypeError) as error:
            problems.append(f"entry {ident}: cannot be hashed ({error})")
            actual = ""
        if actual != entry.get("hash"):
            problems.append(f"entry {ident}: hash does not match its content")
        previous = str(entry.get("hash"))
        expected_id = ident + 1 if isinstance(ident, int) else None
    return problems
