"""The console's audit chain, pure: each entry's hash is the SHA-256 of the RFC 8785
canonical JSON of the entry without its hash, and names the hash of the entry before it,
so changing, removing or reordering any entry breaks every hash after it, unless the
hashes are recomputed, or the tail is cut: only an anchor (below) shows those."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
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


# --- anchors: the chain's head, kept outside the database ---------------------------------
#
# The chain alone proves that entries agree with each other, not that they are all there:
# whoever can write the table can cut its newest entries, or change one and recompute
# every hash after it. An anchor is the head (how many entries, the newest hash) recorded
# somewhere the database's writer cannot reach: the console's log lines and metrics as it
# appends, or an export signed with the console's key. Checked against an anchor, a cut
# tail or a rewritten, rehashed entry shows.

EXPORT_FORMAT = "oracle-console-audit/1"
SIGNATURE_ALGORITHM = "HMAC-SHA256"
# Entry fields a person wrote or the console recorded; the hashes only follow from them.
CONTENT_FIELDS = ("at", "actor", "action", "subject", "details")
_HEAD_TEXT = re.compile(r"^(\d+):([0-9a-f]{64})$")


@dataclass(frozen=True)
class AuditHead:
    """The chain's newest entry: its id, which is the number of entries (ids count from 1
    without gaps), and its hash. (0, GENESIS) for an empty log."""

    entries: int
    head_hash: str

    def text(self) -> str:
        """`ENTRIES:HASH`, as `oracle console audit verify --anchor` reads it."""
        return f"{self.entries}:{self.head_hash}"

    @classmethod
    def parse(cls, text: str) -> AuditHead:
        match = _HEAD_TEXT.match(text.strip().lower())
        if match is None:
            raise ValueError(
                f"{text!r} is not ENTRIES:HASH (a count, a colon, 64 hex digits of SHA-256)"
            )
        return cls(int(match.group(1)), match.group(2))


def head_of(entries: Sequence[Mapping[str, Any]]) -> AuditHead:
    """The head of a chain given oldest first."""
    if not entries:
        return AuditHead(0, GENESIS)
    newest = entries[-1]
    return AuditHead(int(newest["id"]), str(newest["hash"]))


def key_id(key: bytes) -> str:
    """Names a signing key without revealing it (so a verifier can say "another key")."""
    return hashlib.sha256(b"oracle console audit key id\x00" + key).hexdigest()[:16]


def _signed_bytes(head: AuditHead) -> bytes:
    return rfc8785.dumps(
        {"format": EXPORT_FORMAT, "entries": head.entries, "head_hash": head.head_hash}
    )


def sign_head(head: AuditHead, key: bytes) -> dict[str, Any]:
    """An export's last line: its head, signed. The head hash covers every entry through
    the chain, so signing it signs the whole export."""
    return {
        "format": EXPORT_FORMAT,
        "entries": head.entries,
        "head_hash": head.head_hash,
        "algorithm": SIGNATURE_ALGORITHM,
        "key_id": key_id(key),
        "signature": hmac.new(key, _signed_bytes(head), hashlib.sha256).hexdigest(),
    }


def signature_problem(signed: Mapping[str, Any], key: bytes) -> str | None:
    """Why a signed head does not verify with `key` (None: it does)."""
    if signed.get("format") != EXPORT_FORMAT or signed.get("algorithm") != SIGNATURE_ALGORITHM:
        return (
            f"signed as {signed.get('format')!r} with {signed.get('algorithm')!r}, "
            f"not {EXPORT_FORMAT} with {SIGNATURE_ALGORITHM}"
        )
    try:
        head = AuditHead(int(signed["entries"]), str(signed["head_hash"]))
    except (KeyError, TypeError, ValueError):
        return "the signed head lacks its entry count or head hash"
    if signed.get("key_id") != key_id(key):
        return (
            f"signed with key {signed.get('key_id')!r}, not with the configured key {key_id(key)!r}"
        )
    expected = hmac.new(key, _signed_bytes(head), hashlib.sha256).hexdigest()
    sent = signed.get("signature")
    if not isinstance(sent, str) or not hmac.compare_digest(sent, expected):
        return "the signature does not match its head: the export was altered"
    return None


def describe(entry: Mapping[str, Any]) -> str:
    """An entry in a few words: what, by whom, on what, when."""
    at = entry.get("at")
    when = (
        datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if isinstance(at, int | float)
        else repr(at)
    )
    return f"{entry.get('action')} by {entry.get('actor')} on {entry.get('subject')} at {when}"


def anchor_problems(entries: Sequence[Mapping[str, Any]], anchor: AuditHead) -> list[str]:
    """How a chain (oldest first) departs from a head recorded earlier: its tail cut, or
    the anchored entry no longer the one anchored (something up to it was changed,
    removed or reordered and the hashes recomputed). A head alone cannot say which entry:
    an anchored export (`export_differences`) can. Empty: the anchored entries are all
    there, unchanged (entries after the anchor are newer, and not covered by it)."""
    if anchor.entries == 0:
        return []
    last = int(entries[-1]["id"]) if entries else 0
    anchored = next((e for e in entries if e.get("id") == anchor.entries), None)
    if anchored is None:
        gone = (
            f"entry {anchor.entries} was"
            if last + 1 == anchor.entries
            else f"entries {last + 1}..{anchor.entries} were"
        )
        return [
            f"the log ends at entry {last} but the anchor counts {anchor.entries}: {gone} "
            "removed (the tail was cut)"
        ]
    if anchored.get("hash") != anchor.head_hash:
        return [
            f"entry {anchor.entries}: hash {str(anchored.get('hash'))[:16]}… is not the "
            f"anchored {anchor.head_hash[:16]}…: entries 1..{anchor.entries} were changed, "
            "removed or reordered and rehashed (an anchored export names which)"
        ]
    return []


def _content(entry: Mapping[str, Any]) -> str:
    return rfc8785.dumps({name: entry.get(name) for name in CONTENT_FIELDS}).decode()


def export_differences(
    entries: Sequence[Mapping[str, Any]], anchored: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every anchored entry (from a signed export) that the chain no longer holds as it
    was: changed (naming each field, before and after), moved to another id, removed, or
    cut from the end. Empty: every anchored entry is there, unchanged."""
    by_id = {entry.get("id"): entry for entry in entries}
    was_at = {_content(entry): entry.get("id") for entry in anchored}
    last = max((e["id"] for e in entries if isinstance(e.get("id"), int)), default=0)
    problems: list[str] = []
    cut: list[Mapping[str, Any]] = []
    for before in anchored:
        ident = before.get("id")
        now = by_id.get(ident)
        if now is None:
            if isinstance(ident, int) and ident > last:
                cut.append(before)
            else:
                problems.append(f"entry {ident}: removed (was {describe(before)})")
            continue
        changed = [name for name in CONTENT_FIELDS if now.get(name) != before.get(name)]
        if not changed:
            continue
        moved_from = was_at.get(_content(now))
        if moved_from is not None and moved_from != ident:
            problems.append(
                f"entry {ident}: holds what was entry {moved_from} ({describe(now)}): "
                "entries were removed, inserted or reordered"
            )
            continue
        for name in changed:
            problems.append(
                f"entry {ident}: {name} was {before.get(name)!r}, now {now.get(name)!r}"
            )
    if cut:
        problems.append(
            f"the log ends at entry {last} but the anchored export has {len(anchored)}: "
            f"{len(cut)} entr{'y' if len(cut) == 1 else 'ies'} removed from the end (the tail "
            "was cut)"
        )
        problems.extend(f"entry {e.get('id')}: removed (was {describe(e)})" for e in cut)
    return problems
