"""The market question, parsed from UMA-style ancillary data or taken as plain text.

UMA ancillary data reads like::

    q: title: Will X happen by June 30?, description: This market will resolve to "Yes"
    if ... res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to
    unknown/50-50. Updates made by the question creator ... should be considered.,
    initializer:91430cad2d3975766499717fa0d66a78b814e5c5

`res_data` maps price identifiers (p1..p4) to values, and the sentence after it names what
each means. Text after that sentence (bulletin-board updates, clarifications) and the
market's `criteria` are kept as clarifications; machine fields such as `initializer:` are
dropped. Anything that does not start with `q:` is a plain-text question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from oracle.core.models import Market
from oracle.core.timing import AnswerWindow

_TITLE = re.compile(r"^\s*q\s*:\s*title\s*:\s*", re.IGNORECASE)
_DESCRIPTION = re.compile(r",?\s*description\s*:\s*", re.IGNORECASE)
_RES_DATA = re.compile(r"\bres_data\s*:\s*", re.IGNORECASE)
_PAIR = re.compile(r"\b(p[1-4])\s*:\s*(-?[0-9][0-9.eE+-]*)")
_WHERE = re.compile(r"where\s+(p[1-4]\s+corresponds?\s+to\s+.*?)(?:\.(?:\s|$)|$)", re.IGNORECASE)
_MEANING = re.compile(
    r"(p[1-4])\s+(?:corresponds?\s+)?to\s+(.+?)\s*(?:,\s*(?:and\s+)?(?=p[1-4]\b)|$)", re.IGNORECASE
)
_MACHINE = re.compile(
    r",?\s*\b(initializer|ooRequester|childRequester|childChainId|childOracle)\s*:\s*\S+",
    re.IGNORECASE,
)
_CLARIFICATION_SPLIT = re.compile(
    r"\n\s*\n|\n(?=\s*(?:update|clarification|note)\b)", re.IGNORECASE
)
_SPACES = re.compile(r"[^\S\n]+")
_BLANK_LINES = re.compile(r"\n(?: ?\n)+")
# UMA's YES_OR_NO_QUERY identifiers when the text does not name them.
_DEFAULT_MEANINGS = {"p1": "No", "p2": "Yes", "p3": "unknown/50-50"}


@dataclass(frozen=True)
class ParsedQuestion:
    title: str
    description: str = ""
    resolution_values: dict[str, str] = field(default_factory=dict)
    outcome_meanings: dict[str, str] = field(default_factory=dict)
    clarifications: tuple[str, ...] = ()
    from_ancillary_data: bool = False

    def render(self) -> str:
        """The question as the agent's prompt states it."""
        lines = [f"Title: {self.title}"]
        if self.description:
            lines.append(f"Description: {self.description}")
        if self.resolution_values:
            lines.append("Resolution values:")
            for key, value in sorted(self.resolution_values.items()):
                meaning = self.outcome_meanings.get(key)
                lines.append(f"  {key} = {value}" + (f" ({meaning})" if meaning else ""))
        for index, text in enumerate(self.clarifications, 1):
            lines.append(f"Clarification {index}: {text}")
        return "\n".join(lines)


def _clean(text: str) -> str:
    return " ".join(text.split()).strip(" ,")


def _clarifications(*texts: str) -> tuple[str, ...]:
    found: list[str] = []
    for text in texts:
        for part in _CLARIFICATION_SPLIT.split(_MACHINE.sub("", text)):
            cleaned = _clean(part).strip(" .,")
            if cleaned and cleaned not in found:
                found.append(cleaned)
    return tuple(found)


def _squeezed(text: str) -> str:
    """`text` with each run of spaces, and of blank lines, made one: the expressions here
    then meet no whitespace run longer than a few characters (a long one made them
    backtrack, quadratically, on a question anyone can write)."""
    return _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", text))


def parse_question(text: str, criteria: str = "") -> ParsedQuestion:
    """Parse ancillary data or plain text; `criteria` is appended as a clarification."""
    text, criteria = _squeezed(text), _squeezed(criteria)
    title_match = _TITLE.match(text)
    if title_match is None:
        return _plain(text, criteria)
    rest = text[title_match.end() :]
    description_match = _DESCRIPTION.search(rest)
    res_match = _RES_DATA.search(rest)
    if description_match is not None and (
        res_match is None or description_match.start() < res_match.start()
    ):
        title = rest[: description_match.start()]
        body = rest[description_match.end() :]
    else:
        title, body = (
            (rest[: res_match.start()], rest[res_match.start() :]) if res_match else (rest, "")
        )
    res_match = _RES_DATA.search(body)
    values: dict[str, str] = {}
    meanings: dict[str, str] = {}
    tail = ""
    description = body
    if res_match is not None:
        description = body[: res_match.start()]
        after = body[res_match.end() :]
        position = 0
        for pair in _PAIR.finditer(after):
            between = after[position : pair.start()]
            if position and between.strip(" ,") != "":
                break
            values[pair.group(1).lower()] = pair.group(2).rstrip(".")
            position = pair.end()
        tail = after[position:].lstrip(" .,")
        where = _WHERE.match(tail)
        if where is not None:
            for meaning in _MEANING.finditer(where.group(1)):
                meanings[meaning.group(1).lower()] = _clean(meaning.group(2)).rstrip(".")
            tail = tail[where.end() :]
        if not meanings:
            meanings = {k: v for k, v in _DEFAULT_MEANINGS.items() if k in values}
    clarifications = _clarifications(
        tail, criteria if _clean(criteria) != _clean(description) else ""
    )
    return ParsedQuestion(
        title=_clean(title),
        description=_clean(_MACHINE.sub("", description)),
        resolution_values=values,
        outcome_meanings=meanings,
        clarifications=clarifications,
        from_ancillary_data=True,
    )


def _plain(text: str, criteria: str) -> ParsedQuestion:
    stripped = text.strip()
    first, _, rest = stripped.partition("\n")
    return ParsedQuestion(
        title=_clean(first),
        description=_clean(rest),
        clarifications=_clarifications(criteria if _clean(criteria) != _clean(rest) else ""),
    )


def present(market: Market, clock_now: float) -> float:
    """The agents' present: the venue's clock when this research began, when the daemon
    says; else the agent's own clock (a market from before windows, a replay)."""
    return market.now if market.now is not None else clock_now


def epoch_text(seconds: float) -> str:
    """An epoch time as ISO 8601 UTC; one no calendar holds (a venue may send any number)
    as the number itself."""
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):
        return f"{seconds:g} seconds after 1970-01-01T00:00:00+00:00"


def early_outcomes(market: Market, window: AnswerWindow) -> tuple[str, ...]:
    """The market's outcomes that are final as soon as they are observed (`final` in
    `oracle.core.timing` matches names exactly, so only those count here too)."""
    return tuple(o for o in market.outcomes if o in window.early_outcomes)


def _window_source(window: AnswerWindow) -> str:
    """What said when the window is, for the agent's reasoning (market text, shown as it
    is shown in `hold_reason`)."""
    return f"{window.origin}: {window.evidence or 'no words recorded'}"


def too_early_reason(market: Market, now: float) -> str | None:
    """Why no answer can be final at `now`, so the agent answers UNDETERMINED without
    research; None when it may research. With a window: before the event can happen, or
    before the window closes when no outcome can be known early. Without one (a market
    from before windows): before the venue's resolution time."""
    window = market.window
    if window is None:
        if market.resolve_after is None or now >= market.resolve_after:
            return None
        return (
            f"too early: the venue's resolution time is {epoch_text(market.resolve_after)} "
            f"and it is now {epoch_text(now)}; an answer before then would be a guess"
        )
    if not window.started(now):
        why = f"the event cannot happen before {epoch_text(window.opens_at or 0.0)}"
    elif now < window.closes_at and not early_outcomes(market, window):
        closes = epoch_text(window.closes_at)
        why = f"no outcome is final before the question's window closes at {closes}"
    else:
        return None
    return (
        f"not yet: {why}, and it is now {epoch_text(now)} (the window from "
        f"{_window_source(window)}); an answer before then would be a guess"
    )
