"""A signer's track record as UMA's proposer-whitelist guideline counts it. Pure; no I/O.

UMA's guideline for adding a third party to Polymarket's default proposer whitelist: at
least :data:`MIN_PROPOSALS` (5) proposals on the Optimistic Oracle V2 (or the managed
OOv2) in the last :data:`WINDOW_MONTHS` (6) months, with more than :data:`MIN_ACCURACY`
(95 %) accuracy. Counted here, per venue and signer:

- a **proposal** is an answer the signer put on the venue (the market's own answer, not
  another party's recorded beside our verdict), made (its confirmation seen) within the
  six calendar months before now: from the same day and time six months earlier (the
  last day of that month when it has fewer days), that moment included;
- it is **accurate** when the venue's final outcome is the proposed one: it was not
  disputed, or disputed and the vote upheld it; a successful dispute settles on another
  outcome and makes it inaccurate. A proposal not final yet is **pending**: neither.
  A market whose final outcome a person corrected (`oracle accuracy record`) is judged on
  the corrected outcome;
- **accuracy** is accurate / judged (pending left out); the guideline is **met** when at
  least 5 proposals are judged and the accuracy is strictly above 95 % (so 20 judged with
  one wrong, 95.0 %, is not; 21 with one wrong, 95.2 %, is). Only judged proposals count
  toward the 5: a pending one may still be overturned.

**Second opinions** are verdicts the daemon reached and kept without proposing (another
party answered first; the signer was not allowed to propose, e.g. off a managed oracle's
whitelist): the proposals the signer would have made. They are counted the same way, on
their own, and together with the proposals (`with_second_opinions`), so an operator sees
the record the signer would have if it had been proposing.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any, Literal

from oracle.core.text import visible

MIN_PROPOSALS = 5
MIN_ACCURACY = Fraction(95, 100)  # strictly above; compared exactly, never in floats
WINDOW_MONTHS = 6

Kind = Literal["proposal", "second_opinion"]


@dataclass(frozen=True)
class Answer:
    """One answer of a signer on a venue: proposed (`proposal`) or kept (`second_opinion`)."""

    market_id: str
    venue: str
    signer: str
    kind: Kind
    at: float  # epoch seconds: when it was proposed (or, a second opinion, recorded)
    outcome: str  # what was (or would have been) proposed
    final_outcome: str | None  # the venue's final outcome; None while not final


@dataclass(frozen=True)
class Tally:
    answers: int
    judged: int
    accurate: int
    pending: int
    accuracy: float | None  # accurate / judged; None when nothing is judged

    @property
    def meets(self) -> bool:
        return self.judged >= MIN_PROPOSALS and Fraction(self.accurate, self.judged) > MIN_ACCURACY


@dataclass(frozen=True)
class SignerRecord:
    venue: str
    signer: str
    proposals: Tally
    second_opinions: Tally
    with_second_opinions: Tally  # the record had the second opinions been proposals
    inaccurate: tuple[str, ...]  # market ids of the proposals judged wrong
    guideline: bool | None  # met; None where the guideline does not apply (not OOv2)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("proposals", "second_opinions", "with_second_opinions"):
            data[key]["meets"] = getattr(self, key).meets
        data["inaccurate"] = list(self.inaccurate)
        return data


def window_start(now: float, months: int = WINDOW_MONTHS) -> float:
    """The moment `months` calendar months before `now` (UTC): the same day and time, or
    the month's last day when it has fewer (31 August -> 28 or 29 February)."""
    moment = datetime.fromtimestamp(now, UTC)
    index = moment.year * 12 + (moment.month - 1) - months
    year, month = divmod(index, 12)
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day).timestamp()


def tally(answers: Iterable[Answer]) -> Tally:
    counted = list(answers)
    judged = [a for a in counted if a.final_outcome is not None]
    accurate = sum(1 for a in judged if a.final_outcome == a.outcome)
    return Tally(
        answers=len(counted),
        judged=len(judged),
        accurate=accurate,
        pending=len(counted) - len(judged),
        accuracy=accurate / len(judged) if judged else None,
    )


def records(
    answers: Iterable[Answer], *, now: float, guideline_venues: Iterable[str] | None = None
) -> tuple[SignerRecord, ...]:
    """Each (venue, signer)'s record over the window ending at `now`; `guideline_venues`:
    the venues the guideline counts (UMA OOv2, managed or not), None: every venue."""
    start = window_start(now)
    applies = None if guideline_venues is None else set(guideline_venues)
    groups: dict[tuple[str, str], list[Answer]] = {}
    for answer in answers:
        if start <= answer.at <= now:
            groups.setdefault((answer.venue, answer.signer), []).append(answer)
    found = []
    for (venue, signer), group in sorted(groups.items()):
        proposed = [a for a in group if a.kind == "proposal"]
        kept = [a for a in group if a.kind == "second_opinion"]
        own = tally(proposed)
        found.append(
            SignerRecord(
                venue=venue,
                signer=signer,
                proposals=own,
                second_opinions=tally(kept),
                with_second_opinions=tally(group),
                inaccurate=tuple(
                    sorted(
                        a.market_id
                        for a in proposed
                        if a.final_outcome is not None and a.final_outcome != a.outcome
                    )
                ),
                guideline=own.meets if applies is None or venue in applies else None,
            )
        )
    return tuple(found)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _line(label: str, t: Tally) -> str:
    return (
        f"  {label}: {t.answers}  judged {t.judged}, accurate {t.accurate}, "
        f"pending {t.pending}, accuracy {_percent(t.accuracy)}"
    )


def render_text(found: Iterable[SignerRecord], *, start: float, now: float) -> str:
    """The records as an operator reads them; a market id may come from a venue, so it is
    shown with its invisible and control characters escaped (`oracle.core.text.visible`)."""
    lines = [
        f"proposer whitelist record: {datetime.fromtimestamp(start, UTC):%Y-%m-%d %H:%M} to "
        f"{datetime.fromtimestamp(now, UTC):%Y-%m-%d %H:%M} UTC (UMA's guideline: at least "
        f"{MIN_PROPOSALS} proposals on OOv2 in {WINDOW_MONTHS} months, accuracy above "
        f"{float(MIN_ACCURACY):.0%})"
    ]
    shown = list(found)
    if not shown:
        lines.append("  no proposals or second opinions in the window")
    for record in shown:
        if record.guideline is None:
            verdict = "n/a (the guideline counts UMA OOv2 venues)"
        else:
            verdict = "met" if record.guideline else "not met"
        lines.append(f"{visible(record.venue)} {visible(record.signer)}: guideline {verdict}")
        lines.append(_line("proposals", record.proposals))
        lines.append(_line("second opinions (would have been proposals)", record.second_opinions))
        both = record.with_second_opinions
        lines.append(
            _line("both together", both) + f"  (would {'' if both.meets else 'not '}meet it)"
        )
        if record.inaccurate:
            wrong = ", ".join(visible(m) for m in record.inaccurate)
            lines.append(f"  inaccurate proposals: {wrong}")
    return "\n".join(lines) + "\n"
