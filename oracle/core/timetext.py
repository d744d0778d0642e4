"""The answer window a question's own words name: a deterministic reader of the time
expressions prediction-market questions use (pure: no I/O, no clock).

`read_window(text, asked_at=..., outcomes=...)` reads, in the title and the description:

- deadlines: "by March 14, 2025, 11:59 PM ET", "by May 31", "before April" (the end of
  March), "by the end of 2025", "before 2026", "by Friday" (the first Friday from asked_at),
  "by 4:00 PM ET on March 12, 2025", "until", "through", "no later than", "prior to";
- periods: "between March 17, 12:00 PM ET and March 31, 2025, 11:59 PM ET", "from ... to
  ...", "March 25-31", "April 15 and 16, 2025", "in April", "during 2025", "Q1 2025",
  "today", "this week", "this month";
- scheduled events: "scheduled for April 19 at 2:20PM ET", "is scheduled to give a press
  conference on March 19, 2025, at 2:00 PM ET", "scheduled for 4 AM ET on April 26, 2025":
  the window runs from the start to the start plus the usual length of that kind of event
  (`EVENT_HOURS`); a date without a time runs to the end of that day plus that length;
- moments: "the 20 Apr '25 12:00 ET candle", "checked on April 4, 2025, 12:00 PM ET";
- days: "on March 14, 2025", "on April 20?" (the whole day);
- ISO dates and times: 2025-03-31, 2025-03-31T12:00:00Z.

Times carry their zone ("ET", "EDT", "PT", "UTC", "CET", "in the ET timezone", ...); a time
or day without one is on New York's clock, as Polymarket writes. A day without a time
means its end (11:59:59 PM) in a deadline; a date without a year is the first such date
from a week before asked_at on.

Which date governs: in the description, precise deadlines and periods (the latest), then a
scheduled event, a moment, a month or a year, a bare day; only then the title's, in the
same order; in one sentence, the last of a kind ("a date prior to October 20, by March
31"). The sentence that says how the question resolves always counts; others that say
what happens if the event is cancelled, postponed or does not happen ("If no such
briefing happens by ...") are fallbacks, and so is a sentence that opens with a past date
("On March 13, Judge Alsup ruled"): neither is the window.

The outcome quoted in `resolve to "X" if <it happens> by <deadline>`, in `immediately
resolve to "X"`, or in `resolve to "X" if <speaker> says` of a scheduled speech is early
(final once seen); where that is unclear none is.

Hostile text costs linear time: only the first `TEXT_LIMIT` characters are read, every
pattern is free of nested repetition, and look-behinds are bounded slices.
"""

from __future__ import annotations

import calendar
import math
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from enum import Enum
from zoneinfo import ZoneInfo

from oracle.core.timing import HOUR, AnswerWindow

TEXT_LIMIT = 20_000
EVIDENCE_CHARS = 200
YEAR_LOOKBACK = timedelta(days=7)  # a yearless date this recent is still this year's
LATEST_EPOCH = 4_102_444_800.0  # 2100-01-01: times past it are not read

_ZONE_NAMES: dict[str, str] = {
    **dict.fromkeys(("ET", "EST", "EDT", "EASTERN", "EASTERN TIME"), "America/New_York"),
    **dict.fromkeys(("CT", "CST", "CDT", "CENTRAL", "CENTRAL TIME"), "America/Chicago"),
    **dict.fromkeys(("MT", "MST", "MDT", "MOUNTAIN", "MOUNTAIN TIME"), "America/Denver"),
    **dict.fromkeys(("PT", "PST", "PDT", "PACIFIC", "PACIFIC TIME"), "America/Los_Angeles"),
    **dict.fromkeys(("UTC", "GMT", "Z"), "UTC"),
    **dict.fromkeys(("CET", "CEST"), "Europe/Paris"),
    "BST": "Europe/London",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "KST": "Asia/Seoul",
    **dict.fromkeys(("AEST", "AEDT"), "Australia/Sydney"),
}
DEFAULT_ZONE = "America/New_York"

# The usual length of an event from its start, by kind; the first kind named wins, in
# this order (a draft before the NFL, a press conference before the league it is about).
_TALK = r"press conference|presser|briefing|speech|address|remarks|interview|meeting|hearing"
_ESPORTS = r"LoL|League of Legends|CS2|CS:?GO|Counter-Strike|Dota|Valorant|esports"
_SOCCER = r"EPL|Premier League|UCL|Champions League|Europa|La Liga|Serie A|Bundesliga|MLS|soccer"
EVENT_HOURS: dict[str, tuple[str, float]] = {
    "price": (r"candle", 1 / 60),  # a 1-minute candle's close
    "draft": (r"draft", 4.0),
    "talk": (rf"(?:{_TALK}|testimony|debate|rally|podcast)s?", 2.0),
    "fight card": (r"UFC|boxing|bout|fight", 6.0),
    "test cricket": (r"Test match", 5 * 24.0),
    "t20 cricket": (r"IPL|T20", 5.5),
    "cricket": (r"cricket", 9.0),
    "tennis": (r"tennis|ATP|WTA", 4.0),
    "esports": (_ESPORTS, 4.0),
    "college basketball": (r"CBB|WBB|NCAA|college basketball|March Madness", 2.5),
    "nba": (r"W?NBA", 2.75),
    "nhl": (r"NHL|hockey", 3.0),
    "nfl": (r"NFL|CFB", 3.5),
    "mlb": (r"MLB|baseball", 3.5),
    "soccer": (_SOCCER, 2.25),
}
_EVENT_KINDS = [
    (re.compile(rf"\b(?:{words})\b", re.IGNORECASE), hours * HOUR)
    for words, hours in EVENT_HOURS.values()
]
UNKNOWN_EVENT_LENGTH = 4 * HOUR


class TimeForm(Enum):
    """What the words that govern a window name."""

    DEADLINE = "deadline"  # by / before / until: the window closes then
    PERIOD = "period"  # between ... and, in April, this week: opens and closes
    SCHEDULED = "scheduled"  # an event that starts then and lasts its usual length
    MOMENT = "moment"  # a time of day on its own (a price at noon)
    DAY = "day"  # a bare day: all of it


@dataclass(frozen=True)
class _Mention:
    role: TimeForm
    start: datetime
    end: datetime  # the last instant named (a day's 23:59:59, or the time itself)
    coarse: bool  # a month, quarter or year
    evidence: str
    sentence: str
    offset: int  # where the mention starts in its sentence


_MONTH = (
    r"(?P<month>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b\.?"
)
_YEAR = r"(?P<year>(?:19|20)\d\d)(?![\d:])"
_DATE_PATTERNS = (
    re.compile(
        r"\b(?P<year>\d{4})-(?P<mon>\d\d)-(?P<day>\d\d)(?:[T ](?P<hour>\d\d):(?P<minute>\d\d)"
        r"(?::\d\d(?:\.\d{1,9})?)?(?P<offset>Z|[+-]\d\d:?\d\d)?)?(?![\d-])"
    ),
    re.compile(
        rf"\b{_MONTH},?\s{{1,3}}(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?![\d:+])"
        r"(?:\s?[-–]\s?(?P<day2>[0-3]?\d)(?![\d:])|\s(?:and|&)\s(?P<day3>[0-3]?\d)(?![\d:+]))?"
        rf"(?:,?\s{{1,2}}{_YEAR})?"
    ),
    re.compile(
        rf"\b(?P<day>[0-3]?\d)(?:st|nd|rd|th)?\s{{1,2}}(?:of\s)?{_MONTH}"
        rf"(?:,?\s{{1,2}}(?:'(?P<yy>\d\d)\b|{_YEAR}))?"
    ),
    re.compile(rf"\b{_MONTH}(?:,?\s{{1,2}}{_YEAR}(?![-–/]\d))?(?![\s,]{{0,3}}\d)"),
    re.compile(r"\bQ(?P<quarter>[1-4])(?:(?:\s{1,2}|')(?P<qyear>(?:19|20)\d\d|\d\d))?\b"),
    re.compile(rf"\b(?<![-–/]){_YEAR}(?![-–/]?\d)"),
    re.compile(
        r"\b(?P<weekday>(?:(?:next|this)\s)?(?:Monday|Tuesday|Wednesday|Thursday|Friday"
        r"|Saturday|Sunday))\b"
    ),
    re.compile(r"\b(?P<relative>today|tonight|tomorrow|(?:this|next) (?:week|month|year))\b", re.I),
)
_TIME = (
    r"(?P<hour>[0-2]?\d)(?::(?P<minute>[0-5]\d))?(?::[0-5]\d)?\s{0,2}"
    r"(?P<ampm>[AaPp]\.?\s?[Mm]\b\.?)?|(?P<word>noon|midnight)"
)
_ZONE = r"(?P<zone>(?:Eastern|Central|Mountain|Pacific)(?: Time)?|[A-Z]{1,4})\b"
_TIME_AFTER = re.compile(rf"\s{{0,2}},?\s{{0,2}}(?:at\s{{1,2}}|@\s{{0,2}})?(?:{_TIME})")
_ZONE_AFTER = re.compile(
    rf"\s{{0,2}},?\s{{0,2}}\(?(?:{_ZONE}|in\s{{1,2}}the\s{{1,2}}{_ZONE.replace('zone', 'zone2')}"
    r"\s{1,2}time\s?zone)\)?"
)
_TIME_BEFORE = re.compile(
    rf"(?:at\s{{1,2}})?(?:{_TIME})\s{{0,2}}(?:{_ZONE})?\s{{0,2}},?\s{{0,2}}on\s{{1,2}}$"
)
_CUE = re.compile(
    r"(?:\bscheduled\s{1,2})?(?:\b(?P<cue>no later than|prior to|by|before|until|till|through"
    r"|thru|between|from|on|in|during|for|at|as of|after|since|starting|beginning|of)[\s,]{1,3})?"
    r"(?:(?P<the>the)\s{1,2})?(?:(?P<end>end|close)\s{1,2}of\s{1,2}(?:the\s{1,2})?)?$",
    re.IGNORECASE,
)
# What joins the two ends of a period: "and", "to", a dash, with a few words between
# ("between April 18, and market close on April 30").
_CONNECTOR = re.compile(
    r"\s{0,2}(?:\([^()]{0,24}\))?\s{0,2},?\s{0,2}(?P<word>and|to|through|thru|until|till"
    r"|-|–|—)(?:\s{1,2}[a-z][a-z ]{0,24})?\s{0,3}$"
)
_DASHES = frozenset("-–—")
_DEADLINE_CUES = frozenset(
    {"no later than", "prior to", "by", "before", "until", "till", "through", "thru"}
)
_EXCLUSIVE_CUES = frozenset({"before", "prior to"})
_SCHEDULE_WORDS = re.compile(
    r"\b(?:scheduled|set to|slated|will take place|takes place|will be held|upcoming"
    r"|kicks? ?off|tips? ?off)\b",
    re.IGNORECASE,
)
_FALLBACK = re.compile(
    r"^\W{0,3}(?:if|in the event|in case|should|unless)\b|\b(?:remain open|50-50|postponed"
    r"|cancell?ed|rescheduled)\b",
    re.IGNORECASE,
)
_RESOLVES = re.compile(r"\bresolve[sd]?\b", re.IGNORECASE)
_TO_LABEL = r"\bresolve[sd]?\s{1,3}(?:to\s{1,3})?\"(?P<label>[^\"\n]{1,80})\""
_RESOLVE_IF = re.compile(rf"{_TO_LABEL}\s{{0,3}},?\s{{0,3}}if\b", re.IGNORECASE)
_RESOLVE_IMMEDIATELY = re.compile(rf"\bimmediately\s{{1,3}}{_TO_LABEL}", re.IGNORECASE)
_IF_THEN = re.compile(rf"\W{{0,3}}if\b(?P<condition>[^\n]{{0,600}}?){_TO_LABEL}", re.IGNORECASE)
# A condition that can stop holding, or holds only at the deadline, makes no outcome early:
# "remains CEO", "does not", "fewer than".
_NOT_MONOTONE = re.compile(
    r"\b(?:not|no|never|remains?|still|continues? to|fails? to|without|fewer than|less than)\b"
    r"|n't\b",
    re.IGNORECASE,
)
_SAYS = re.compile(r"\b(?:says?|mentions?|utters?)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.?!][\"')\]]{0,2}\s+(?![a-z])|\n+")  # not before "if it ..."
# A period after these ends no sentence: "U.S.", "J. Smith", "vs.", "Mar."
_ABBREVIATION = re.compile(
    r"(?:[A-Z]\.)*[A-Z]|(?i:vs|st|mr|mrs|ms|dr|jr|sr|inc|ltd|co|jan|feb|mar|apr|jun|jul|aug"
    r"|sept?|oct|nov|dec)"
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‟": '"', "‘": "'", "’": "'"})
# English names whatever the process's locale (calendar.month_abbr follows LC_TIME).
_MONTHS = {name[:3]: i for i, name in enumerate(re.findall(r"[A-Z][a-z]+", _MONTH), 1)}
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def read_window(text: str, *, asked_at: float, outcomes: tuple[str, ...]) -> AnswerWindow | None:
    """The window `text` names, or None when it names no usable time."""
    read = read_window_form(text, asked_at=asked_at, outcomes=outcomes)
    return read[0] if read else None


def read_window_form(
    text: str, *, asked_at: float, outcomes: tuple[str, ...]
) -> tuple[AnswerWindow, TimeForm] | None:
    """`read_window`, with the form of the words it read (for figures and tests)."""
    if not math.isfinite(asked_at) or not 0 <= asked_at < LATEST_EPOCH:
        return None
    clean = _clean(text)
    title, description = _split(clean)
    asked = datetime.fromtimestamp(asked_at, ZoneInfo(DEFAULT_ZONE))
    found: list[tuple[int, _Mention]] = []
    main = _main_sentence(description)
    for place, part in ((0, description), (1, title)):
        for sentence in _sentences(part):
            if place == 0 and sentence != main and _FALLBACK.search(sentence):
                continue
            # Within a sentence the last date of a kind is the window ("scheduled for a
            # date prior to October 20, by March 31"); across sentences the latest.
            last_of_tier = {_tier(m, place): m for m in _mentions(sentence, asked)}
            found += last_of_tier.items()
    if not found:
        return None
    best = min(tier for tier, _ in found)
    chosen = max((m for tier, m in found if tier == best), key=lambda m: m.end)
    window = _window(chosen, description, outcomes, from_title=best in TITLE_TIERS)
    return (window, chosen.role) if window else None


def _main_sentence(description: str) -> str | None:
    """The first sentence that says how the question resolves: the question itself, never
    a fallback, even where it is written "If X happens by D, this market will resolve to
    Yes"."""
    return next((s for s in _sentences(description) if _RESOLVES.search(s)), None)


def _tier(mention: _Mention, place: int) -> int:
    """Rank of a mention as the window, lower first: any date of the description (place
    0) before the title's (place 1, `TITLE_TIERS`)."""
    if mention.role is TimeForm.DAY:
        rank = 4
    elif mention.role in (TimeForm.DEADLINE, TimeForm.PERIOD):
        rank = 3 if mention.coarse else 0
    else:
        rank = 1 if mention.role is TimeForm.SCHEDULED else 2
    return rank + len(TITLE_TIERS) * place


TITLE_TIERS = range(5, 10)


def _window(
    chosen: _Mention, description: str, outcomes: tuple[str, ...], *, from_title: bool
) -> AnswerWindow | None:
    start, end = chosen.start.timestamp(), chosen.end.timestamp()
    immediate = [m["label"] for m in _RESOLVE_IMMEDIATELY.finditer(description)]
    early = _labels_of(immediate, outcomes)
    if chosen.role in (TimeForm.DEADLINE, TimeForm.PERIOD):
        early |= _resolves_if_it_happens(chosen, description, outcomes, from_title=from_title)
        opens = start if chosen.role is TimeForm.PERIOD else None
        closes = end
    elif chosen.role in (TimeForm.SCHEDULED, TimeForm.MOMENT):
        length = _event_length(chosen, description)
        if chosen.role is TimeForm.SCHEDULED:
            early |= _said_outcomes(description, outcomes)
        opens, closes = start, end + length
    else:
        opens, closes = start, end
    if closes >= LATEST_EPOCH:
        return None
    return AnswerWindow(
        closes_at=closes,
        opens_at=opens if opens is None or opens <= closes else None,
        early_outcomes=tuple(o for o in outcomes if o in early),
        origin="question",
        evidence=chosen.evidence,
    )


def _event_length(chosen: _Mention, description: str) -> float:
    places = [chosen.sentence]
    if chosen.role is TimeForm.SCHEDULED:
        places.append(description)
    for place in places:
        for words, length in _EVENT_KINDS:
            if words.search(place):
                return length
    return UNKNOWN_EVENT_LENGTH if chosen.role is TimeForm.SCHEDULED else 0.0


def _resolves_if_it_happens(
    chosen: _Mention, description: str, outcomes: tuple[str, ...], *, from_title: bool
) -> set[str]:
    """The outcome of `resolve to "X" if <it happens> by <deadline>`: final once seen."""
    sentence = _main_sentence(description) if from_title else chosen.sentence
    if sentence is None:
        return set()
    if_then = _IF_THEN.match(sentence)
    resolve_if = _RESOLVE_IF.search(sentence)
    if if_then:
        label, condition = if_then["label"], if_then["condition"]
    elif resolve_if:
        # The condition runs to the deadline, or to the end of the sentence.
        stop = chosen.offset if not from_title and chosen.offset > resolve_if.end() else None
        label, condition = resolve_if["label"], sentence[resolve_if.end() : stop]
    else:
        return set()
    return set() if _NOT_MONOTONE.search(condition) else _labels_of([label], outcomes)


def _said_outcomes(description: str, outcomes: tuple[str, ...]) -> set[str]:
    """`resolve to "Yes" if <speaker> says <term>`: known once said during the event."""
    for match in _RESOLVE_IF.finditer(description):
        condition = description[match.end() : match.end() + 120].split(".", maxsplit=1)[0]
        if _SAYS.search(condition) and not _NOT_MONOTONE.search(condition):
            return _labels_of([match.group("label")], outcomes)
    return set()


def _labels_of(labels: list[str], outcomes: tuple[str, ...]) -> set[str]:
    """The outcomes the quoted labels name, spelled as `outcomes` spell them."""
    by_key = {_label_key(o): o for o in outcomes}
    return {by_key[key] for key in map(_label_key, labels) if key in by_key}


def _label_key(label: str) -> str:
    return label.strip().strip(".,;:!? \"'").casefold()


def _clean(text: str) -> str:
    """NFKC (fullwidth digits read as digits), no invisible characters, straight quotes."""
    text = unicodedata.normalize("NFKC", text[:TEXT_LIMIT])[: TEXT_LIMIT * 2]
    text = "".join(c for c in text if unicodedata.category(c) not in ("Cf", "Cc") or c == "\n")
    return text.translate(_QUOTES)


def _split(text: str) -> tuple[str, str]:
    """Title and description (with what follows it) of an ancillary-data question."""
    _, has_title, body = text.partition("title:")
    title, has_description, description = body.partition(", description:")
    return (title, description) if has_title and has_description else ("", text)


def _sentences(text: str) -> list[str]:
    """Sentences and lines; a period after an abbreviation ("U.S.", "vs.", "Mar.") ends
    none."""
    sentences, begin = [], 0
    for match in _SENTENCE_END.finditer(text):
        before = text[max(begin, match.start() - 8) : match.start()].split()
        word = before[-1] if before else ""
        if match.group().startswith("\n") or not _ABBREVIATION.fullmatch(word):
            sentences.append(text[begin : match.end()].strip())
            begin = match.end()
    sentences.append(text[begin:].strip())
    return [s for s in sentences if s]


@dataclass
class _Core:
    """A date as written, before its year and role are known."""

    begin: int
    end: int
    form: str = "day"  # day, month, quarter, year, weekday, relative
    month: int = 1
    day: int = 1
    last_day: int | None = None  # "March 25-31"
    year: int | None = None
    hour: int | None = None
    minute: int = 0
    zone: str | None = None
    fixed: tuple[datetime, datetime] | None = None  # weekday and relative forms


def _mentions(sentence: str, asked: datetime) -> list[_Mention]:
    cores = _cores(sentence, asked)
    schedule = _SCHEDULE_WORDS.search(sentence)
    scheduled_at = schedule.start() if schedule else len(sentence)
    mentions: list[_Mention] = []
    index = 0
    while index < len(cores):
        core = cores[index]
        cue_match = _CUE.search(sentence, max(0, core.begin - 40), core.begin)
        cue = (cue_match["cue"] or "").casefold() if cue_match else ""
        ends_of = bool(cue_match and cue_match["end"])
        after_the = bool(cue_match and cue_match["the"] and not ends_of)
        cue_begin = cue_match.start() if cue_match and cue_match.group() else core.begin
        later = cores[index + 1] if index + 1 < len(cores) else None
        connector = _CONNECTOR.match(sentence, core.end, later.begin) if later else None
        index += 1
        if later and connector and (cue in ("between", "from") or connector["word"] in _DASHES):
            index += 1
            # The end's year, written or inferred, is the start's too ("from March 1 to 15").
            later.year = later.year if later.year is not None else core.year
            last = _resolve(later, asked)
            if last and later.year is None and later.form == "day":
                later.year = last[0].year
            first = _resolve(core, asked, until=later)
            if first and last:
                words = _words(sentence, cue_begin, later.end)
                mentions.append(
                    _Mention(TimeForm.PERIOD, first[0], last[1], False, words, sentence, cue_begin)
                )
            continue
        resolved = _resolve(core, asked)
        # "the 2025 NFL Draft", "March Madness", "May" the verb: no bare month or year.
        named = after_the or sentence[core.end : core.end + 3].strip()[:1].isupper()
        role = _role(core, cue, ends_of=ends_of, named=named, scheduled=scheduled_at < core.begin)
        if resolved is None or role is None:
            continue
        start, end = resolved
        if role is TimeForm.SCHEDULED and core.hour == core.minute == 0 and core.year is None:
            # "scheduled for March 30 at 12:00AM ET": Polymarket's way of saying the start
            # time is not known yet; the whole day, then.
            core.hour = None
            start, end = _resolve(core, asked) or resolved
        timed = core.hour is not None
        if cue in ("on", "in") and not sentence[:cue_begin].strip() and end < asked:
            continue  # "On March 13, Judge Alsup released an order": what happened before
        if role is TimeForm.DEADLINE and cue in _EXCLUSIVE_CUES and not ends_of:
            end = start if timed else start - timedelta(seconds=1)
        coarse = core.form in ("month", "quarter", "year") or end - start > timedelta(days=8)
        words = _words(sentence, cue_begin, core.end)
        mentions.append(_Mention(role, start, end, coarse, words, sentence, cue_begin))
    return mentions


def _role(core: _Core, cue: str, *, ends_of: bool, named: bool, scheduled: bool) -> TimeForm | None:
    """What a date is to the question, from the word before it and its sentence."""
    if core.form in ("month", "year") and named:
        return None
    if cue in _DEADLINE_CUES or ends_of:
        return TimeForm.DEADLINE
    if core.form == "weekday":
        return TimeForm.DAY if cue in ("on", "") else None
    if core.form in ("month", "year"):
        return TimeForm.PERIOD if cue in ("in", "during") else None
    if cue in ("after", "since", "from", "starting", "beginning"):
        return None
    if core.form == "day" and scheduled:
        return TimeForm.SCHEDULED
    if core.last_day is not None or core.form in ("relative", "quarter"):
        return TimeForm.PERIOD
    return TimeForm.MOMENT if core.hour is not None else TimeForm.DAY


def _words(sentence: str, begin: int, end: int) -> str:
    return " ".join(sentence[begin:end].split())[:EVIDENCE_CHARS]


def _cores(sentence: str, asked: datetime) -> list[_Core]:
    """Every date written in `sentence`, with the time and zone that follow or precede it;
    where two readings overlap, the one that starts first (then the longest) is kept."""
    found = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(sentence):
            core = _core(match, asked)
            if core is not None:
                found.append(core)
    found.sort(key=lambda c: (c.begin, -c.end))
    kept: list[_Core] = []
    for core in found:
        if not kept or core.begin >= kept[-1].end:
            _read_time(sentence, core, kept[-1].end if kept else 0)
            kept.append(core)
    return kept


def _core(match: re.Match[str], asked: datetime) -> _Core | None:
    found = match.groupdict()
    core = _Core(match.start(), match.end())
    if found.get("year"):
        core.year = int(found["year"])
    if found.get("yy"):
        core.year = 2000 + int(found["yy"])
    if found.get("month"):
        core.month = _MONTHS[found["month"][:3]]
    elif found.get("mon"):
        core.month = int(found["mon"])
    if found.get("day"):
        core.day = int(found["day"])
        last = found.get("day2") or found.get("day3")
        core.last_day = int(last) if last else None
    elif found.get("month"):
        core.form = "month"
    elif found.get("year"):
        core.form = "year"
    if found.get("hour"):
        if found.get("offset") not in (None, "Z"):
            return None  # numeric offsets: rare, and not worth a wrong guess
        core.hour, core.minute = int(found["hour"]), int(found["minute"])
        core.zone = "UTC" if found.get("offset") else None
    if found.get("quarter"):
        year = found.get("qyear")
        core.form, core.month = "quarter", 3 * int(found["quarter"])
        core.year = (int(year) + (2000 if len(year) == 2 else 0)) if year else None
    for form in ("weekday", "relative"):
        if found.get(form):
            core.form, core.fixed = form, _relative(found[form], asked)
    return core


def _read_time(sentence: str, core: _Core, floor: int) -> None:
    """The time and zone written after the date ("at 2:20PM ET"), or before it ("4 AM ET
    on April 26")."""
    if core.form != "day":
        return
    if core.hour is None and core.last_day is None:
        after = _TIME_AFTER.match(sentence, core.end)
        before = _TIME_BEFORE.search(sentence, max(floor, core.begin - 40), core.begin)
        for match in (after, before):
            if match and (clock := _hour_minute(match)):
                core.hour, core.minute = clock
                core.zone = _zone_name(match)
                core.begin, core.end = min(core.begin, match.start()), max(core.end, match.end())
                break
    zone = _ZONE_AFTER.match(sentence, core.end)
    if zone and _zone_name(zone):
        core.zone = core.zone or _zone_name(zone)
        core.end = zone.end()


def _hour_minute(match: re.Match[str]) -> tuple[int, int] | None:
    if match["word"]:
        return (12, 0) if match["word"] == "noon" else (0, 0)
    if match["hour"] is None or not (match["minute"] or match["ampm"]):
        return None
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    if (hour, minute) == (11, 59) and not match["ampm"]:
        return 23, 59  # "by March 31, 2025, 11:59 ET": the end of the day, as always meant
    if match["ampm"]:
        if not 0 <= hour <= 12:  # "00:00 AM" is written too
            return None
        hour = hour % 12 + (12 if match["ampm"][0] in "Pp" else 0)
    return (hour, minute) if hour <= 23 else None


def _zone_name(match: re.Match[str]) -> str | None:
    found = match.groupdict()
    name = found.get("zone") or found.get("zone2")
    return name.upper() if name and name.upper() in _ZONE_NAMES else None


def _resolve(
    core: _Core, asked: datetime, until: _Core | None = None
) -> tuple[datetime, datetime] | None:
    """The first and last instant `core` names; None if it names no real date."""
    if core.fixed is not None:
        return core.fixed
    zone = ZoneInfo(_ZONE_NAMES[core.zone or (until and until.zone) or "ET"])
    try:
        year = core.year if core.year is not None else _year_for(core, asked, until, zone)
        if core.form == "year":
            return _at(year, 1, 1, zone), _at(year, 12, 31, zone, _LAST_SECOND)
        if core.form in ("month", "quarter"):
            first_month = core.month - (2 if core.form == "quarter" else 0)
            last_day = calendar.monthrange(year, core.month)[1]
            return _at(year, first_month, 1, zone), _at(
                year, core.month, last_day, zone, _LAST_SECOND
            )
        if core.hour is not None:
            moment = _at(year, core.month, core.day, zone, (core.hour, core.minute, 0))
            return moment, moment
        first = _at(year, core.month, core.day, zone)
        last = _at(year, core.month, core.last_day or core.day, zone, _LAST_SECOND)
        return (first, last) if first <= last else None
    except ValueError:  # February 30th, month 13, a year out of range
        return None


def _year_for(core: _Core, asked: datetime, later: _Core | None, zone: tzinfo) -> int:
    """The year of a yearless date: that of the date it runs up to, if any, else the first
    such date from `YEAR_LOOKBACK` before asked on."""
    if later is not None and later.year is not None and later.form == "day":
        return later.year - ((core.month, core.day) > (later.month, later.day))
    floor = (asked - YEAR_LOOKBACK).astimezone(zone)
    if core.form in ("month", "quarter"):  # this one, if it has not ended
        return floor.year + (core.month < floor.month)
    return floor.year + ((core.month, core.day) < (floor.month, floor.day))


def _at(
    year: int, month: int, day: int, zone: tzinfo, clock: tuple[int, int, int] = (0, 0, 0)
) -> datetime:
    if not 1970 <= year < 2100:
        raise ValueError(f"year {year} out of range")
    hour, minute, second = clock
    return datetime(year, month, day, hour, minute, second, tzinfo=zone)


def _relative(name: str, asked: datetime) -> tuple[datetime, datetime]:
    """Days named from the day asked (New York's clock): a weekday (the first from that day;
    "next": a week on), today, tomorrow, this or next week (Monday to Sunday), month, year."""
    today = asked.replace(hour=0, minute=0, second=0, microsecond=0)
    words = name.split()
    following, last = words[0].casefold() == "next", words[-1].casefold()
    if last.capitalize() in _WEEKDAYS:
        ahead = (_WEEKDAYS.index(last.capitalize()) - today.weekday()) % 7 + 7 * following
        first, days = today + timedelta(days=ahead), 1
    elif last in ("today", "tonight", "tomorrow"):
        first, days = today + timedelta(days=last == "tomorrow"), 1
    elif last == "week":
        first, days = today - timedelta(days=today.weekday() - 7 * following), 7
    elif last == "month":
        year, month = divmod(today.year * 12 + today.month - 1 + following, 12)
        first = today.replace(year=year, month=month + 1, day=1)
        days = calendar.monthrange(year, month + 1)[1]
    else:
        first = today.replace(year=today.year + following, month=1, day=1)
        days = 365 + calendar.isleap(first.year)
    return first, first + timedelta(days=days - 1) + _DAY_LAST


_DAY_LAST = timedelta(days=1, seconds=-1)
_LAST_SECOND = (23, 59, 59)
