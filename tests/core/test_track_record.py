"""The whitelist record: UMA's guideline (at least 5 proposals on OOv2 in six months, more
than 95 % accurate) counted per venue and signer, with the second opinions beside it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from oracle.core.track_record import Answer, Kind, records, render_text, tally, window_start


def epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


NOW = epoch("2026-08-31T12:00:00")
START = epoch("2026-02-28T12:00:00")  # six months back; February has no 31st


def answer(
    n: int,
    *,
    right: bool | None = True,
    at: float = NOW - 86_400,
    kind: Kind = "proposal",
    venue: str = "polymarket",
    signer: str = "0xabc",
) -> Answer:
    final = None if right is None else ("YES" if right else "NO")
    return Answer(f"uma:{n}", venue, signer, kind, at, "YES", final)


@pytest.mark.parametrize(
    ("now", "start"),
    [
        ("2026-08-31T12:00:00", "2026-02-28T12:00:00"),
        ("2028-08-31T00:00:00", "2028-02-29T00:00:00"),  # a leap year
        ("2026-03-15T08:30:00", "2025-09-15T08:30:00"),  # across a year
        ("2026-07-01T00:00:00", "2026-01-01T00:00:00"),
    ],
)
def test_the_window_is_six_calendar_months(now: str, start: str) -> None:
    assert window_start(epoch(now)) == epoch(start)


def test_the_window_includes_its_first_moment_and_nothing_before() -> None:
    inside = [answer(i, at=START) for i in range(5)]
    [record] = records(inside, now=NOW)
    assert record.proposals.answers == 5
    assert record.guideline is True
    outside = [answer(i, at=START - 1) for i in range(5)]
    assert records(outside, now=NOW) == ()
    later = [answer(i, at=NOW + 1) for i in range(5)]  # after now: not yet in any record
    assert records(later, now=NOW) == ()


def test_five_judged_proposals_are_needed_and_pending_ones_do_not_count() -> None:
    four = tally([answer(i) for i in range(4)])
    assert (four.judged, four.accuracy, four.meets) == (4, 1.0, False)
    five = tally([answer(i) for i in range(5)])
    assert five.meets
    pending = tally([*(answer(i) for i in range(4)), answer(9, right=None)])
    assert (pending.answers, pending.judged, pending.pending, pending.meets) == (5, 4, 1, False)


def test_accuracy_must_be_strictly_above_95_percent() -> None:
    at_95 = tally([*(answer(i) for i in range(19)), answer(99, right=False)])
    assert (at_95.judged, at_95.accurate) == (20, 19)
    assert at_95.accuracy == pytest.approx(0.95)
    assert not at_95.meets  # 95.0 % is not more than 95 %
    above = tally([*(answer(i) for i in range(20)), answer(99, right=False)])
    assert above.meets  # 20 of 21: 95.2 %
    one_wrong_of_five = tally([*(answer(i) for i in range(4)), answer(99, right=False)])
    assert (one_wrong_of_five.accuracy, one_wrong_of_five.meets) == (0.8, False)
    assert tally([]).accuracy is None


def test_records_are_per_venue_and_signer_and_second_opinions_stand_beside() -> None:
    answers = [
        *(answer(i) for i in range(3)),
        answer(3, right=False),
        *(answer(10 + i, kind="second_opinion") for i in range(3)),
        answer(20, kind="second_opinion", right=None),
        *(answer(30 + i, signer="0xdef") for i in range(5)),
        *(answer(40 + i, venue="reality") for i in range(6)),
    ]
    by = {
        (r.venue, r.signer): r for r in records(answers, now=NOW, guideline_venues=["polymarket"])
    }
    ours = by["polymarket", "0xabc"]
    assert (ours.proposals.answers, ours.proposals.accurate, ours.proposals.judged) == (4, 3, 4)
    assert ours.guideline is False
    assert ours.inaccurate == ("uma:3",)
    kept = ours.second_opinions
    assert (kept.answers, kept.judged, kept.accurate, kept.pending) == (4, 3, 3, 1)
    both = ours.with_second_opinions
    assert (both.judged, both.accurate, both.meets) == (7, 6, False)
    assert by["polymarket", "0xdef"].guideline is True
    # The guideline counts OOv2 venues only: elsewhere the record is shown, not judged.
    assert by["reality", "0xabc"].guideline is None
    assert by["reality", "0xabc"].proposals.meets
    text = render_text(
        records(answers, now=NOW, guideline_venues=["polymarket"]), start=START, now=NOW
    )
    assert "polymarket 0xabc: guideline not met" in text
    assert "polymarket 0xdef: guideline met" in text
    assert "reality 0xabc: guideline n/a" in text
    assert "inaccurate proposals: uma:3" in text
    assert "2026-02-28 12:00 to 2026-08-31 12:00 UTC" in text


def test_a_hostile_market_id_is_shown_escaped() -> None:
    wrong = Answer("http:\u202eevil\nline", "venue", "0xabc", "proposal", NOW - 1, "YES", "NO")
    text = render_text(records([wrong], now=NOW), start=START, now=NOW)
    assert "\u202e" not in text
    assert "\\u202eevil\\nline" in text
