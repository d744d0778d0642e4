"""The audit log's anchor, pure: a head (count and hash) or a signed export, kept outside
the database, against which a cut tail or a rewritten and rehashed entry shows (the
chain alone holds after both)."""

from __future__ import annotations

from typing import Any

import pytest

from oracle.core.audit import (
    GENESIS,
    AuditHead,
    anchor_problems,
    chain_problems,
    entry_hash,
    export_differences,
    head_of,
    key_id,
    sign_head,
    signature_problem,
)

KEY = b"k" * 32
AT = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC


def chain(*rows: tuple[str, str, str]) -> list[dict[str, Any]]:
    """Entries (actor, action, subject) chained as the store chains them."""
    entries: list[dict[str, Any]] = []
    previous = GENESIS
    for number, (actor, action, subject) in enumerate(rows, start=1):
        entry = {
            "id": number,
            "at": AT + number,
            "actor": actor,
            "action": action,
            "subject": subject,
            "details": {},
            "prev_hash": previous,
        }
        entry["hash"] = previous = entry_hash(entry)
        entries.append(entry)
    return entries


ROWS = (
    ("admin", "user.added", "user:rita"),
    ("rita", "review.viewed", "market:chain:q1"),
    ("rita", "review.decided", "market:chain:q1"),
    ("ann", "review.approved", "market:chain:q1"),
)


def test_a_cut_tail_passes_the_chain_but_not_the_anchor() -> None:
    anchored = chain(*ROWS)
    anchor = head_of(anchored)
    cut = anchored[:2]
    assert chain_problems(cut) == []
    assert anchor_problems(cut, anchor) == [
        "the log ends at entry 2 but the anchor counts 4: entries 3..4 were removed "
        "(the tail was cut)"
    ]
    assert export_differences(cut, anchored) == [
        "the log ends at entry 2 but the anchored export has 4: 2 entries removed from the "
        "end (the tail was cut)",
        "entry 3: removed (was review.decided by rita on market:chain:q1 at "
        "2026-09-21 14:13:23 UTC)",
        "entry 4: removed (was review.approved by ann on market:chain:q1 at "
        "2026-09-21 14:13:24 UTC)",
    ]


def test_a_rehashed_rewrite_passes_the_chain_but_not_the_anchor() -> None:
    anchored = chain(*ROWS)
    anchor = head_of(anchored)
    rewritten = chain(ROWS[0], ROWS[1], ("mallory", *ROWS[2][1:]), ROWS[3])
    assert chain_problems(rewritten) == []
    (problem,) = anchor_problems(rewritten, anchor)
    assert problem.startswith("entry 4: hash ")
    assert "entries 1..4 were changed, removed or reordered and rehashed" in problem
    assert export_differences(rewritten, anchored) == ["entry 3: actor was 'rita', now 'mallory'"]


def test_a_removed_or_reordered_entry_is_named_by_an_anchored_export() -> None:
    anchored = chain(*ROWS)
    without_second = chain(ROWS[0], ROWS[2], ROWS[3])
    for entry, was in zip(without_second, (anchored[0], anchored[2], anchored[3]), strict=True):
        entry["at"] = was["at"]  # the same entries, renumbered and rehashed
    problems = export_differences(without_second, anchored)
    assert problems[:2] == [
        "entry 2: holds what was entry 3 (review.decided by rita on market:chain:q1 at "
        "2026-09-21 14:13:23 UTC): entries were removed, inserted or reordered",
        "entry 3: holds what was entry 4 (review.approved by ann on market:chain:q1 at "
        "2026-09-21 14:13:24 UTC): entries were removed, inserted or reordered",
    ]
    assert problems[-1].startswith("entry 4: removed (was review.approved by ann")


def test_newer_entries_than_the_anchor_are_not_a_problem() -> None:
    anchored = chain(*ROWS[:2])
    assert anchor_problems(chain(*ROWS), head_of(anchored)) == []
    assert export_differences(chain(*ROWS), anchored) == []
    assert anchor_problems([], AuditHead(0, GENESIS)) == []


def test_a_signed_head_verifies_only_unaltered_and_with_its_key() -> None:
    head = head_of(chain(*ROWS))
    signed = sign_head(head, KEY)
    assert signature_problem(signed, KEY) is None
    assert KEY.decode() not in str(signed)
    assert signed["key_id"] == key_id(KEY) != key_id(b"o" * 32)
    other_key = signature_problem(signed, b"o" * 32)
    assert "not with the configured key" in str(other_key)
    for change in ({"entries": 3}, {"head_hash": "0" * 64}, {"signature": "00" * 32}):
        assert signature_problem({**signed, **change}, KEY) == (
            "the signature does not match its head: the export was altered"
        )
    wrong_format = signature_problem({**signed, "algorithm": "none"}, KEY)
    assert "not oracle-console-audit/1 with HMAC-SHA256" in str(wrong_format)


@pytest.mark.parametrize("text", ["4", "4:abc", "x:" + "0" * 64, "-1:" + "0" * 64, ""])
def test_a_head_is_entries_colon_hash(text: str) -> None:
    with pytest.raises(ValueError, match="is not ENTRIES:HASH"):
        AuditHead.parse(text)
    assert AuditHead.parse(f"4:{'A' * 64}") == AuditHead(4, "a" * 64)
