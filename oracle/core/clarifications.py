"""Clarifications a question's creator posted on a bulletin board, as text for the agents:
pure, no I/O.

Polymarket's question creators post clarifications on the bulletin board of UMA's CTF
adapter (`postUpdate(questionID, update)`, `questionID` = keccak256 of the request's
ancillary data). Anyone may post for any question; only the updates of the question's
creator (the `initializer` of its ancillary data) count, and the chain layer reads only
those (`getUpdates(questionID, owner)`, oldest first, each with its block time).

The updates are bytes anyone controlled by the creator's key wrote: untrusted text. Here
they become the market's `criteria`, which the agents see inside the question's
untrusted-data block (`oracle.agents.prompts`) and which the proof records:

* at most `max_updates` of them (the latest, shown oldest first), each cut to
  `max_update_chars` characters (only its first `4 x max_update_chars` bytes are decoded,
  so a huge update costs no more than a short one) and all of them to `max_total_chars`;
  what is left out is said so in the text (`omitted`);
* decoded as UTF-8 with invalid bytes replaced, control and format characters (bidi
  overrides, zero-width ones) dropped and white space made single spaces, so each update
  is one line: one clarification for the agents, never several;
* each named by when it was posted and the SHA-256 of its exact bytes, so the proof says
  which updates were used, and anyone can check them against the board.

Updates posted after `posted_by` (the chain's time when the question is read) are left
out: the research only ever sees what was on the board before it.

A board that is configured but whose answer for the question could not be used leaves a
note in the criteria and `error` in the record the market's details keep; such a market's
verdict always goes to a person (`review_reasons`, code `clarifications_unreadable`): the
creator may have changed how it resolves, and nobody has read what they wrote.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from oracle.core.decision import ReviewReason

# The review code of a market whose board could not be read (`review_reasons`).
UNREADABLE = "clarifications_unreadable"


@dataclass(frozen=True)
class BoardUpdate:
    """One update as the board returns it: its block time and its bytes."""

    timestamp: int
    update: bytes


@dataclass(frozen=True)
class ClarificationLimits:
    max_updates: int = 10
    max_update_chars: int = 2000
    max_total_chars: int = 8000


@dataclass(frozen=True)
class UsedClarification:
    """An update shown to the agents: when it was posted, the SHA-256 of its bytes, its
    size, and whether it was cut."""

    timestamp: int
    sha256: str
    size: int
    truncated: bool


@dataclass(frozen=True)
class Clarifications:
    text: str  # the market's criteria ("" when there is nothing to show)
    used: tuple[UsedClarification, ...]
    omitted: int  # updates by the creator not shown (over a limit)

    def record(self) -> dict[str, Any]:
        """What the market's details keep: which updates were used."""
        return {
            "used": [
                {
                    "timestamp": u.timestamp,
                    "sha256": u.sha256,
                    "bytes": u.size,
                    "truncated": u.truncated,
                }
                for u in self.used
            ],
            "omitted": self.omitted,
        }


NONE = Clarifications("", (), 0)


def one_line(raw: bytes, max_chars: int) -> tuple[str, bool]:
    """`raw` as one line of at most `max_chars` characters (see the module docstring), and
    whether anything was cut."""
    head = raw[: max_chars * 4]
    text = head.decode("utf-8", errors="replace")
    kept = "".join(
        " " if char.isspace() else char
        for char in text
        if char.isspace() or unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Co", "Cn")
    )
    line = " ".join(kept.split())
    cut = len(head) < len(raw) or len(line) > max_chars
    return (line[:max_chars].rstrip() + " [cut]" if cut else line), cut


def _when(timestamp: int) -> str:
    try:
        return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, ValueError, OSError):
        return f"block time {timestamp}"


def clarifications(
    updates: Sequence[BoardUpdate],
    *,
    owner: str,
    posted_by: int,
    limits: ClarificationLimits = ClarificationLimits(),
) -> Clarifications:
    """The updates `owner` (the question's creator) posted by `posted_by`, as the market's
    criteria for the agents (see the module docstring)."""
    posted = [u for u in updates if u.timestamp <= posted_by]
    entries: list[tuple[str, UsedClarification]] = []
    total = 0
    # Newest first, so the limits keep the latest; shown oldest first.
    for update in reversed(posted[-limits.max_updates :]):
        line, cut = one_line(bytes(update.update), limits.max_update_chars)
        if not line:
            line = "(empty)"
        digest = hashlib.sha256(bytes(update.update)).hexdigest()
        entry = (
            f"Posted on the question's bulletin board by its creator {owner} at "
            f"{_when(update.timestamp)} (sha256 {digest}): {line}"
        )
        if entries and total + len(entry) > limits.max_total_chars:
            break
        total += len(entry)
        entries.append(
            (entry, UsedClarification(update.timestamp, digest, len(update.update), cut))
        )
    entries.reverse()
    omitted = len(posted) - len(entries)
    lines = [entry for entry, _ in entries]
    if omitted:
        lines.insert(
            0,
            f"Note: {omitted} earlier update{'s' if omitted != 1 else ''} by the question's "
            f"creator on its bulletin board {'are' if omitted != 1 else 'is'} not shown (at "
            f"most {limits.max_updates} updates and {limits.max_total_chars} characters are "
            "kept).",
        )
    return Clarifications("\n\n".join(lines), tuple(used for _, used in entries), omitted)


def review_reasons(record: Mapping[str, Any] | None) -> list[ReviewReason]:
    """Why a person must look before a verdict on the market goes out, judging by what its
    details record of the board (`record`; None: no board configured): its answer could not
    be used (`error`)."""
    if not record or not record.get("error"):
        return []
    return [
        ReviewReason(
            UNREADABLE,
            "the clarifications the question's creator posted on its bulletin board could not "
            f"be read ({record['error']}): they may change how it resolves; read them on the "
            "board before deciding",
        )
    ]
