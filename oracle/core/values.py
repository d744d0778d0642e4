"""Value answers: markets whose answer is a number, a time or a set of options, not one
label. Pure, no I/O.

Most markets are answered by one of their outcome labels. Some ask for a value
(Reality.eth's `uint`, `datetime` and `multiple-select` templates): the agents answer a
value as text, each value has exactly one canonical spelling (`canonical_value`), and the
consensus counts agents who gave equal values as agreeing, exactly as it counts agents
who named the same label (the ballots carry the canonical text; no averaging, no
tolerance: a number within a rounding of another is another answer). A market's
`ValueFormat` says which kind:

* `number`: a non-negative decimal number with at most `decimals` digits after the
  point, written plainly (`12`, `0.5`; no sign, exponent, separator or unit). Canonical:
  no leading zeros, no trailing zeros after the point, no point when whole. Its integer
  (`value_to_int`) is the number times 10**decimals.
* `datetime`: a moment in UTC, written ISO 8601 (`2024-05-01`, midnight UTC, or
  `2024-05-01T12:30:00Z`, an offset or none: UTC) or as Unix seconds (`1714566600`).
  Canonical: `YYYY-MM-DDTHH:MM:SSZ`. Its integer is the Unix time in seconds. With a
  `precision` (Reality.eth's: `Y` year, `m` month, `d` day, `H` hour, `i` minute, `s`
  second) a moment finer than it is refused (2024-05-01T12:30Z is no day), and at `d` or
  coarser the canonical spelling is the date, `YYYY-MM-DD`.
* `set`: some of the market's options (its outcome labels), written as a JSON list of
  labels (`["Red", "Blue"]`; `[]` for none), each once, matched as written or, when only
  one label matches, ignoring case. Canonical: the JSON list in the options' order. Its
  integer is a bitmask, bit i for option i.

Anything else is a `ValueError` saying why, in words an agent can correct its answer by.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_DECIMALS = 77  # 10**77 is the largest power of ten below 2**256
MAX_VALUE = 2**256 - 1
MAX_TEXT = 4096  # a value longer than this is not a value
MAX_SECONDS = 253_402_300_799  # 9999-12-31T23:59:59Z, the last second ISO 8601 can write
_NUMBER = re.compile(r"(\d+)(?:\.(\d+))?", re.ASCII)
_UNIX = re.compile(r"\d{1,12}", re.ASCII)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_DATETIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(Z|[+-]\d{2}:\d{2})?", re.IGNORECASE | re.ASCII
)

ValueKind = Literal["number", "datetime", "set"]
Precision = Literal["Y", "m", "d", "H", "i", "s"]
_PRECISION_WORDS = {
    "Y": "a year (January 1, midnight UTC)",
    "m": "a month (its first day, midnight UTC)",
    "d": "a day (midnight UTC)",
    "H": "an hour (on the hour, UTC)",
    "i": "a minute (on the minute, UTC)",
    "s": "a second",
}


class ValueFormat(BaseModel):
    """What a value market's answer is (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ValueKind
    decimals: int = Field(0, ge=0, le=MAX_DECIMALS)
    precision: Precision | None = None  # datetime only; None: to the second


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise ValueError(f"expected the value as text, got {type(text).__name__}")
    if len(text) > MAX_TEXT:
        raise ValueError(f"longer than {MAX_TEXT} characters")
    return text.strip()


def _number(value_format: ValueFormat, text: str) -> int:
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise ValueError(
            f"{text[:40]!r} is not a number written plainly (digits, at most one point; no "
            "sign, exponent, separator or unit)"
        )
    whole, fraction = match[1], (match[2] or "").rstrip("0")
    if len(fraction) > value_format.decimals:
        raise ValueError(
            f"{text[:40]!r} has more than {value_format.decimals} digits after the point"
        )
    value: int = int(whole) * 10**value_format.decimals + int(
        fraction.ljust(value_format.decimals, "0") or "0"
    )
    if value > MAX_VALUE:
        raise ValueError(f"{text[:40]!r} is too large")
    return value


def _seconds(text: str) -> int:
    if _UNIX.fullmatch(text):
        seconds = int(text)
    else:
        moment = _moment(text)
        seconds = int(moment.timestamp())
    if seconds > MAX_SECONDS:
        raise ValueError(f"{text[:40]!r} is after the year 9999")
    return seconds


def _moment(text: str) -> datetime:
    try:
        if _DATE.fullmatch(text):
            return datetime.fromisoformat(text).replace(tzinfo=UTC)
        match = _DATETIME.fullmatch(text)
        if match is None:
            raise ValueError
        zone = match[3] or "+00:00"
        moment = datetime.fromisoformat(
            f"{match[1]}T{match[2]}{'+00:00' if zone.upper() == 'Z' else zone}"
        )
    except ValueError:
        raise ValueError(
            f"{text[:40]!r} is not a time: write it ISO 8601 in UTC (2024-05-01 or "
            "2024-05-01T12:30:00Z) or as Unix seconds"
        ) from None
    if moment < datetime(1970, 1, 1, tzinfo=UTC):
        raise ValueError(f"{text[:40]!r} is before 1970")
    return moment


def _option_index(options: Sequence[str], label: str) -> int:
    if label in options:
        return list(options).index(label)
    folded = [i for i, option in enumerate(options) if option.casefold() == label.casefold()]
    if len(folded) != 1:
        why = "matches two options ignoring case" if folded else "is not one of the options"
        raise ValueError(f"{label[:80]!r} {why}")
    return folded[0]


def _mask(options: Sequence[str], text: str) -> int:
    if len(options) > 256:
        raise ValueError(f"{len(options)} options: a set answer has at most 256")
    try:
        listed = json.loads(text)
    except (ValueError, RecursionError):
        listed = None
    if not isinstance(listed, list) or not all(isinstance(label, str) for label in listed):
        raise ValueError(
            'a set is written as a JSON list of option labels, such as ["A", "B"] ([] for none)'
        )
    mask = 0
    for label in listed:
        bit = 1 << _option_index(options, label)
        if mask & bit:
            raise ValueError(f"{label[:80]!r} is named twice")
        mask |= bit
    return mask


def value_to_int(value_format: ValueFormat, text: str, options: Sequence[str] = ()) -> int:
    """The integer `text` stands for (see the module docstring); ValueError naming why
    not. `options`: a set's labels, in order."""
    body = _text(text)
    if value_format.kind == "number":
        return _number(value_format, body)
    if value_format.kind == "datetime":
        seconds = _seconds(body)
        _check_precision(value_format, seconds, body)
        return seconds
    return _mask(options, body)


def _finer_than(precision: str, moment: datetime) -> bool:
    parts = {
        "Y": (moment.month - 1, moment.day - 1, moment.hour, moment.minute, moment.second),
        "m": (moment.day - 1, moment.hour, moment.minute, moment.second),
        "d": (moment.hour, moment.minute, moment.second),
        "H": (moment.minute, moment.second),
        "i": (moment.second,),
        "s": (),
    }
    return any(parts[precision])


def _check_precision(value_format: ValueFormat, seconds: int, shown: str) -> None:
    precision = value_format.precision
    if precision is not None and _finer_than(precision, datetime.fromtimestamp(seconds, UTC)):
        raise ValueError(
            f"{shown[:40]!r} is more precise than the question asks: {_PRECISION_WORDS[precision]}"
        )


def int_to_value(value_format: ValueFormat, value: int, options: Sequence[str] = ()) -> str:
    """The canonical text of the integer `value`; ValueError when no value of the format
    is that integer (a bitmask past the options, a time after the year 9999)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_VALUE:
        raise ValueError(f"{value!r} is not an integer from 0 to 2**256 - 1")
    if value_format.kind == "number":
        unit = 10**value_format.decimals
        whole, fraction = divmod(value, unit)
        if fraction == 0:
            return str(whole)
        digits = str(fraction).rjust(value_format.decimals, "0").rstrip("0")
        return f"{whole}.{digits}"
    if value_format.kind == "datetime":
        if value > MAX_SECONDS:
            raise ValueError(f"{value} seconds is after the year 9999")
        _check_precision(value_format, value, str(value))
        moment = datetime.fromtimestamp(value, UTC)
        if value_format.precision in ("Y", "m", "d"):
            return moment.strftime("%Y-%m-%d")
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if value >> len(options):
        raise ValueError(f"the bitmask {value:#x} names options past the {len(options)} there are")
    return json.dumps([o for i, o in enumerate(options) if value >> i & 1], ensure_ascii=False)


def canonical_value(value_format: ValueFormat, text: str, options: Sequence[str] = ()) -> str:
    """The one spelling of the value `text` names; ValueError naming why it names none."""
    return int_to_value(value_format, value_to_int(value_format, text, options), options)


def describe(value_format: ValueFormat) -> str:
    """How an answer of this format is written, for the agents' instructions."""
    if value_format.kind == "number":
        places = (
            f"at most {value_format.decimals} digits after the point"
            if value_format.decimals
            else "a whole number"
        )
        return (
            f"a non-negative number written plainly ({places}; no sign, exponent, "
            "thousands separator or unit), such as 12 or 0.5"
        )
    if value_format.kind == "datetime":
        if value_format.precision in ("Y", "m", "d"):
            return (
                f"a date written ISO 8601, such as 2024-05-01, for "
                f"{_PRECISION_WORDS[value_format.precision]}"
            )
        return (
            "a moment in UTC written ISO 8601, such as 2024-05-01T12:30:00Z (or 2024-05-01 "
            "for midnight UTC)"
        )
    return (
        'the options that apply, as a JSON list of their labels exactly as listed, such as ["A", '
        '"B"], or [] for none'
    )
