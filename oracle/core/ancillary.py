"""UMA ancillary data read as a question, as Polymarket's adapter writes it: pure, no I/O.

A price request on UMA's Optimistic Oracle carries the question in its ancillary data,
UTF-8 text. Polymarket's CTF adapter asks `YES_OR_NO_QUERY` requests laid out as::

    q: title: <title>, description: <description> res_data: p1: 0, p2: 1, p3: 0.5.
    Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50. <notes>,initializer:<hex>

* `q:` opens the question; `title:` and `, description:` split it (a plain `q: <text>`
  is read as a title alone).
* `res_data:` lists the prices a proposer may propose, `pN: <decimal>` separated by
  `, ` and ended by `.`; a decimal is scaled by 1e18 (`1` is 1e18 wei-like units), except
  UMA's "too early" price, the minimum int256, written out in full. The sentence that
  follows, `Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50.`, names them
  (`p2 corresponds to Yes, p1 to a No`, `, and p4 to an early request` occur too).
  Without `res_data:` the identifier's defaults apply: No 0, Yes 1e18, unknown 0.5e18.
* The sentence is read by its structure: a label runs to the next `, pN to ` (`, and pN
  to `, `, pN corresponds to `) of a key the price list holds, so a label may hold full
  stops (`St. Louis Cardinals`, `Mt. St. Mary's`, `U.S. Open`); the last label runs to
  the sentence's end: a full stop followed by white space (or the text's end) that does
  not follow a word always followed by a name (`St.`, `Mt.`, `Dr.`), or a line break. A
  text that could be read two ways is refused: a last label with a full stop that may
  end the sentence or not (`Acme Co. More`, an initial), or a price key named after the
  sentence ended (an abbreviation the reader does not know), never cut silently.
* Early expiration (UMIP-107): `res_data:p1: 0, p2: 1, p3: 0.5, p4:<too-early price>,
  earlyExpiration:1 Where ..., p4 corresponds to early request.`: the flag is kept
  (`early_expiration`) and p4 is the `TOO_EARLY` option, never an answer the agents
  give (see `price_for`).
* What follows that sentence (a note about clarifications on the bulletin board, ...)
  is kept as `notes`.

UMIP-181's JSON layout (`MULTIPLE_CHOICE_QUERY`) is read too: an object `{"title": ...,
"description": ..., "options": [[label, value], ...]}` (then the appended fields), each
value a base-10 integer used as the price as written (not scaled); without `options`,
No is 0 and Yes is 1. Duplicate or unknown keys, values that are not integers within
int256 and too deep nesting are refused, naming them.
* Fields appended at the very end, each `,<key>:<value>`: `initializer` (the adapter:
  who initialised the question, 40 hex digits without 0x), `ooRequester` and
  `childRequester` (addresses the oracle and cross-chain relays stamp), `childChainId`.

The title, description, notes and labels are market text: cleaned
(`oracle.core.text.clean`: no invisible or bidirectional controls, NFKC), the characters
removed counted in `hidden`; a label is read for its meaning once cleaned (`Ye\u200bs`
means YES).

Anything else is an `AncillaryDataError` naming what was wrong and where (a byte offset
in the text), never a crash and never a guess: a question the daemon cannot read
exactly goes to a person, not on-chain with a bond. Inputs are bounded
(`ANCILLARY_BYTES_LIMIT`, the oracle's own limit) and parsed without backtracking
regular expressions, so hostile bytes cost linear time.

UMA's "too early" answer (`TOO_EARLY_PRICE`, the minimum int256) is never the price of
an outcome unless the caller passes `allow_too_early=True`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from oracle.core.text import clean, clean_labels
from oracle.errors import AncillaryDataError

ANCILLARY_BYTES_LIMIT = 8192  # OptimisticOracleV2Interface.ancillaryBytesLimit
PRICE_SCALE = 10**18
TOO_EARLY_PRICE = -(2**255)  # OptimisticOracleV2.TOO_EARLY_RESPONSE, type(int256).min
INT256_MAX = 2**255 - 1

# What an option means for the daemon's verdicts.
YES = "YES"
NO = "NO"
UNKNOWN = "UNKNOWN"  # unknown / 50-50: the verdict INVALID maps here
TOO_EARLY = "TOO_EARLY"

APPENDED_KEYS = ("initializer", "ooRequester", "childRequester", "childChainId")
_ADDRESS_KEYS = frozenset({"initializer", "ooRequester", "childRequester"})
_HEX = frozenset("0123456789abcdefABCDEF")
_MAX_NUMBER_CHARS = 90  # "-57896...968" (78 digits and a sign) plus decimals
_MAX_OPTIONS = 16

# Simple patterns only, each anchored at a known position: no nested or overlapping
# repetition, so none backtracks more than linearly.
_KEY = re.compile(r"p(\d{1,3}):")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_INTEGER = re.compile(r"-?\d+")
_FIRST_LABEL = re.compile(r"p(\d{1,3}) corresponds to ")
# Between two labels: ", p2 to ", ", and p4 to ", ", p4 corresponds to ".
_NEXT_LABEL = re.compile(r", (?:and )?p(\d{1,3}) (?:corresponds )?to ")
_EARLY_EXPIRATION = re.compile(r"earlyExpiration:([01])")
# A full stop after one of these words never ends the sentence: each is always followed
# by a name ("St. Louis Cardinals", "Mt. St. Mary's", "Dr. Pepper").
_PREFIXES = frozenset(
    {
        *("St", "Ste", "Sts", "Mt", "Ft", "Pt"),  # places: St. Louis, Mt. Hood, Ft. Worth
        *("Dr", "Mr", "Mrs", "Ms", "Mme", "Mlle", "Messrs", "Prof", "Rev", "Hon"),
        *("Gen", "Gov", "Sen", "Rep", "Pres", "Lt", "Col", "Capt", "Sgt"),
        *("vs", "Vs"),
    }
)
# A full stop after one of these, or after an initial or initialism ("J.", "U.S."), may
# end the sentence or not ("Acme Co. Updates made ..."): a label is read past it only
# when the next label's `, pN to` follows, never at the end of the sentence.
_SUFFIXES = frozenset(["Jr", "Sr", "Inc", "Co", "Corp", "Ltd", "Bros", "Esq", "Intl", "Univ"])
_INITIALS = re.compile(r"(?:[A-Za-z]\.)*[A-Z]")


@dataclass(frozen=True)
class PriceOption:
    """One price a proposer may propose: `key` as written (`p2`), its `label` (`Yes`),
    what it means to the daemon (`YES`, `NO`, `UNKNOWN`, `TOO_EARLY`, or None for a label
    of the question's own such as `Up`), and the price (1e18 scale)."""

    key: str
    label: str
    meaning: str | None
    price: int


YES_OR_NO_DEFAULTS = (
    PriceOption("p1", "No", NO, 0),
    PriceOption("p2", "Yes", YES, PRICE_SCALE),
    PriceOption("p3", "unknown/50-50", UNKNOWN, PRICE_SCALE // 2),
)
# UMIP-181 (MULTIPLE_CHOICE_QUERY): a JSON request without options; its values are used
# as they are, not scaled.
JSON_DEFAULTS = (PriceOption("o1", "No", NO, 0), PriceOption("o2", "Yes", YES, 1))


@dataclass(frozen=True)
class AncillaryQuestion:
    """Ancillary data read as a question (see the module docstring)."""

    title: str
    description: str
    notes: str
    options: tuple[PriceOption, ...]
    res_data: bool  # False: no `res_data:`, the identifier's defaults apply
    appended: tuple[tuple[str, str], ...]  # (key, value) in the order they were written
    hidden: int = 0  # invisible characters removed from the title, description, notes, labels
    # `earlyExpiration:1` in the price list: a request asked before the question could be
    # answered, whose early-request price (UMA's too-early price, p4) says so.
    early_expiration: bool = False
    layout: str = "q"  # "q" (`q: title: ...`) or "json" (UMIP-181's JSON object)

    @property
    def initializer(self) -> str | None:
        """The adapter's `initializer` as a 0x address (lowercase), if present."""
        value = dict(self.appended).get("initializer")
        return f"0x{value.lower()}" if value is not None else None

    @property
    def text(self) -> str:
        """The question for the agents: the title, then the description and notes."""
        parts = [self.title, self.description, self.notes]
        return "\n\n".join(p for p in parts if p)

    def option(self, outcome: str) -> PriceOption | None:
        """The option for `outcome`: a meaning (YES, NO, UNKNOWN, TOO_EARLY; INVALID is
        UNKNOWN) or a label (case-insensitive); None when the data offers none."""
        wanted = UNKNOWN if outcome.upper() == "INVALID" else outcome.upper()
        for option in self.options:
            if option.meaning == wanted:
                return option
        for option in self.options:
            if option.label.casefold() == outcome.casefold():
                return option
        return None

    def price_for(self, outcome: str, *, allow_too_early: bool = False) -> int:
        """The price to propose for `outcome` (see `option`). UMA's too-early price is
        refused unless `allow_too_early`; an outcome the data offers no price for is
        refused too (both `AncillaryDataError`, naming the outcome)."""
        if outcome.upper() == TOO_EARLY:
            if not allow_too_early:
                raise AncillaryDataError(
                    "outcome TOO_EARLY: UMA's too-early price is never proposed unless the "
                    "venue allows it"
                )
            option = self.option(TOO_EARLY)
            return option.price if option is not None else TOO_EARLY_PRICE
        option = self.option(outcome)
        if option is None:
            offered = ", ".join(f"{o.key} {o.label}" for o in self.options)
            raise AncillaryDataError(f"outcome {outcome}: no price for it ({offered})")
        if option.price == TOO_EARLY_PRICE and not allow_too_early:
            raise AncillaryDataError(
                f"outcome {outcome}: its price is UMA's too-early price, never proposed "
                "unless the venue allows it"
            )
        return option.price


def _fail(where: str, problem: str) -> AncillaryDataError:
    return AncillaryDataError(f"ancillary data: {where}: {problem}")


def _decode(data: bytes, limit: int) -> str:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise _fail("input", f"expected bytes, got {type(data).__name__}")
    size = len(data)
    if size == 0:
        raise _fail("input", "empty")
    if size > limit:
        raise _fail("input", f"{size} bytes, more than the limit of {limit}")
    try:
        text = bytes(data).decode("utf-8", errors="strict")
    except UnicodeDecodeError as error:
        raise _fail("input", f"not UTF-8 (invalid byte at offset {error.start})") from None
    for offset, char in enumerate(text):
        code = ord(char)
        if (code < 32 and char not in "\t\n\r") or code == 127:
            raise _fail("input", f"control character U+{code:04X} at offset {offset}")
    return text


def _valid_appended(key: str, value: str) -> bool:
    if key in _ADDRESS_KEYS:
        return len(value) == 40 and all(c in _HEX for c in value)
    return 0 < len(value) <= 20 and value.isascii() and value.isdigit()


def _split_appended(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(body, appended fields) from the end of the text, each `,<key>:<value>`."""
    fields: list[tuple[str, str]] = []
    body = text
    while True:
        comma = body.rfind(",")
        if comma < 0:
            break
        key, colon, value = body[comma + 1 :].partition(":")
        if not colon or key not in APPENDED_KEYS:
            break
        if any(key == k for k, _ in fields):
            raise _fail(key, f"appears twice (at offset {comma + 1})")
        if not _valid_appended(key, value):
            kind = "a 40-digit hex address" if key in _ADDRESS_KEYS else "a decimal number"
            raise _fail(key, f"not {kind} (at offset {comma + 1})")
        fields.append((key, value))
        body = body[:comma]
    for key in APPENDED_KEYS:
        at = body.find(f",{key}:")
        if at >= 0:
            seen = "appears twice" if any(key == k for k, _ in fields) else "not at the end"
            raise _fail(
                key, f"{seen} (at offset {at + 1}); the fields the oracle appends come last"
            )
    return body, tuple(reversed(fields))


def _once(text: str, key: str, offset: int) -> int:
    """The position of `key` in `text`, -1 when absent; appearing twice is an error."""
    first = text.find(key)
    second = text.find(key, first + 1) if first >= 0 else -1
    if second >= 0:
        raise _fail(
            key.rstrip(":"), f"appears twice (at offsets {offset + first} and {offset + second})"
        )
    return first


def _price(key: str, number: str, offset: int) -> int:
    if len(number) > _MAX_NUMBER_CHARS:
        raise _fail(f"res_data {key}", f"number too long (at offset {offset})")
    if number == str(TOO_EARLY_PRICE):
        return TOO_EARLY_PRICE
    try:
        scaled = Decimal(number) * PRICE_SCALE
    except InvalidOperation:  # pragma: no cover - the pattern only admits decimals
        raise _fail(f"res_data {key}", f"not a number (at offset {offset})") from None
    if scaled != scaled.to_integral_value():
        raise _fail(f"res_data {key}", f"{number} has more than 18 decimals (at offset {offset})")
    price = int(scaled)
    if not TOO_EARLY_PRICE <= price <= INT256_MAX:
        raise _fail(f"res_data {key}", f"{number} is outside int256 once scaled by 1e18")
    return price


def _values(text: str, offset: int) -> tuple[dict[str, int], bool, int]:
    """`p1: 0, p2: 1, p3: 0.5.` from the start of `text`: prices by key, whether the list
    holds `earlyExpiration:1`, and where the list ended (after its full stop, or before the
    `Where` that follows it)."""
    values: dict[str, int] = {}
    early: bool | None = None
    position = 0
    while True:
        while position < len(text) and text[position] == " ":
            position += 1
        flag = _EARLY_EXPIRATION.match(text, position)
        if flag is not None:
            if early is not None:
                raise _fail(
                    "res_data earlyExpiration", f"appears twice (at offset {offset + position})"
                )
            early = flag[1] == "1"
            position = flag.end()
        else:
            key_match = _KEY.match(text, position)
            if key_match is None:
                raise _fail("res_data", f"expected `pN: <number>` at offset {offset + position}")
            key = f"p{int(key_match[1])}"
            position = key_match.end()
            while position < len(text) and text[position] == " ":
                position += 1
            number = _NUMBER.match(text, position)
            if number is None:
                raise _fail(f"res_data {key}", f"expected a number at offset {offset + position}")
            if key in values:
                raise _fail(
                    f"res_data {key}", f"appears twice (at offset {offset + key_match.start()})"
                )
            values[key] = _price(key, number[0], offset + position)
            if len(values) > _MAX_OPTIONS:
                raise _fail("res_data", f"more than {_MAX_OPTIONS} prices")
            position = number.end()
        following = text[position : position + 1]
        if following == ",":
            position += 1
            continue
        if following in (".", ""):
            if not values:
                raise _fail("res_data", f"no `pN: <number>` at offset {offset}")
            return values, bool(early), position + 1
        if following.isspace() and text[position:].lstrip().startswith("Where ") and values:
            return values, bool(early), position  # `..., earlyExpiration:1 Where p1 ...`
        what = "earlyExpiration" if flag is not None else key
        raise _fail(
            "res_data", f"expected `, ` or `.` after {what}'s value at offset {offset + position}"
        )


def _meaning(label: str) -> str | None:
    words = label.strip().rstrip(".").strip().casefold()
    for article in ("a ", "an "):
        if words.startswith(article):
            words = words[len(article) :]
    if words == "yes":
        return YES
    if words == "no":
        return NO
    if words.startswith(("unknown", "50-50", "50/50")):
        return UNKNOWN
    if words in ("early request", "too early", "early"):
        return TOO_EARLY
    return None


def _word_before(text: str, dot: int) -> str:
    """The word that a full stop at `dot` ends (opening quotes and brackets dropped)."""
    start = dot
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:dot].lstrip("\"'([{\u201c\u2018")


def _stops(text: str, start: int) -> tuple[int, int]:
    """From `start`: where the sentence surely ends (a line break, or a full stop followed
    by white space or the text's end, unless it follows a word always followed by a name,
    `_PREFIXES`; the text's end if none), and the first full stop before it that may end
    it or not (after `_SUFFIXES`, an initial or an initialism; -1 if none)."""
    maybe = -1
    position = start
    while position < len(text):
        char = text[position]
        if char == "\n":
            return position, maybe
        if char == "." and (position + 1 == len(text) or text[position + 1].isspace()):
            word = _word_before(text, position)
            if word in _SUFFIXES or _INITIALS.fullmatch(word):
                if maybe < 0:
                    maybe = position
            elif word not in _PREFIXES:
                return position, maybe
        position += 1
    return len(text), maybe


def _labels(text: str, offset: int, priced: frozenset[str]) -> tuple[dict[str, str], str]:
    """The `Where p1 corresponds to No, p2 to Yes, ...` sentence at the start of `text`
    (after white space): labels by key, and what follows the sentence.

    The structure decides where a label ends: at the next `, pN to ` (`, and pN to `,
    `, pN corresponds to `) when it comes before the sentence surely ends, else (the last
    label) where the sentence ends (`_stops`: "St. Louis" does not end it, "Team A." does).
    Read otherwise, a text could be taken two ways: refused, naming where (a last label
    with a full stop that may end the sentence, `Acme Co.`; a price key named after the
    sentence ended)."""
    stripped = text.lstrip()
    skipped = len(text) - len(stripped)
    if not stripped.startswith("Where "):
        return {}, text.strip()
    start = len("Where ")
    first = _FIRST_LABEL.match(stripped, start)
    if first is None:
        raise _fail(
            "res_data",
            f"expected `pN corresponds to <label>` at offset {offset + skipped + start}",
        )
    labels: dict[str, str] = {}
    key, label_start = f"p{int(first[1])}", first.end()
    while True:
        end, maybe = _stops(stripped, label_start)
        following = _NEXT_LABEL.search(stripped, label_start, end)
        label_end = following.start() if following is not None else end
        label = stripped[label_start:label_end].strip()
        if not label:
            raise _fail(
                f"res_data {key}", f"empty label at offset {offset + skipped + label_start}"
            )
        if key in labels:
            raise _fail(f"res_data {key}", "labelled twice")
        if following is None and maybe >= 0 and not stripped[maybe + 1 : end].strip():
            end, label = maybe, stripped[label_start:maybe].strip()  # `... Jr.` ends it all
        elif following is None and maybe >= 0:
            raise _fail(
                f"res_data {key}",
                f"its label may end at offset {offset + skipped + maybe} (after "
                f"`{_word_before(stripped, maybe)}.`) or at offset {offset + skipped + end}: "
                "ambiguous",
            )
        labels[key] = label
        if following is None:
            break
        key, label_start = f"p{int(following[1])}", following.end()
    notes = stripped[end + 1 :]
    for named in (*_NEXT_LABEL.finditer(notes), *_FIRST_LABEL.finditer(notes)):
        late = f"p{int(named[1])}"
        if late in priced and late not in labels:
            raise _fail(
                f"res_data {late}",
                f"named at offset {offset + skipped + end + 1 + named.start()}, after the "
                f"sentence naming the prices ended (at offset {offset + skipped + end}, after "
                f"`{_word_before(stripped, end)}`): ambiguous",
            )
    return labels, notes.strip()


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _fail("json", f"key {key!r} appears twice")
        document[key] = value
    return document


def _no_constant(name: str) -> None:
    raise _fail("json", f"{name} is not a JSON number")


def _json_question(
    body: str, lead: int, appended: tuple[tuple[str, str], ...]
) -> AncillaryQuestion:
    """UMIP-181's layout: a JSON object `{"title": ..., "description": ..., "options":
    [[label, value], ...]}`, each value a base-10 integer used as the price as it is (no
    1e18 scale); without `options`, No is 0 and Yes is 1."""
    try:
        document = json.loads(
            body, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant
        )
    except RecursionError:
        raise _fail("json", "nested too deeply") from None
    except json.JSONDecodeError as error:
        raise _fail("json", f"not JSON: {error.msg} at offset {lead + error.pos}") from None
    if not isinstance(document, dict):
        raise _fail("json", f"expected an object, got {type(document).__name__}")
    unknown = sorted(set(document) - {"title", "description", "options"})
    if unknown:
        raise _fail("json", f"unknown key {unknown[0]!r} (title, description, options)")
    title, description = document.get("title"), document.get("description", "")
    if not isinstance(title, str) or not isinstance(description, str):
        raise _fail("json", "title and description must be strings (title is required)")
    cleaned_title, cleaned_description = clean(title.strip()), clean(description.strip())
    hidden = cleaned_title.removed + cleaned_description.removed
    if not cleaned_title.text.strip():
        raise _fail("title", "empty")
    if "options" not in document:
        return AncillaryQuestion(
            cleaned_title.text.strip(),
            cleaned_description.text.strip(),
            "",
            JSON_DEFAULTS,
            False,
            appended,
            hidden,
            layout="json",
        )
    raw = document["options"]
    if not isinstance(raw, list) or not 0 < len(raw) <= _MAX_OPTIONS:
        raise _fail("json options", f"expected a list of 1 to {_MAX_OPTIONS} [label, value] pairs")
    values: dict[str, int] = {}
    labels: list[str] = []
    for index, pair in enumerate(raw):
        where = f"json options[{index}]"
        if not (
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
        ):
            raise _fail(where, "expected a [label, value] pair of strings")
        label, value = pair
        if not label.strip():
            raise _fail(where, "empty label")
        if _INTEGER.fullmatch(value) is None or len(value) > _MAX_NUMBER_CHARS:
            raise _fail(where, f"value {value[:40]!r} is not a base-10 integer")
        price = int(value)
        if not TOO_EARLY_PRICE <= price <= INT256_MAX:
            raise _fail(where, f"value {value} is outside int256")
        values[f"o{index + 1}"] = price
        labels.append(label.strip())
    cleaned_labels, from_labels = clean_labels(labels)
    options = _options(values, dict(zip(values, cleaned_labels, strict=True)))
    return AncillaryQuestion(
        cleaned_title.text.strip(),
        cleaned_description.text.strip(),
        "",
        options,
        True,
        appended,
        hidden + from_labels,
        layout="json",
    )


def _options(values: dict[str, int], labels: dict[str, str]) -> tuple[PriceOption, ...]:
    for key in labels:
        if key not in values:
            raise _fail(f"res_data {key}", "labelled but has no price")
    if not labels:
        # No sentence naming them: only the standard layout is read, by convention.
        standard = {o.key: o.price for o in YES_OR_NO_DEFAULTS}
        if {k: v for k, v in values.items() if k != "p4"} not in (
            standard,
            {"p1": 0, "p2": PRICE_SCALE},
        ) or values.get("p4", TOO_EARLY_PRICE) != TOO_EARLY_PRICE:
            raise _fail("res_data", "no `Where p1 corresponds to ...` sentence naming the prices")
        defaults = {o.key: o for o in YES_OR_NO_DEFAULTS}
        labels = {k: defaults[k].label if k in defaults else "too early" for k in values}
    options = []
    seen: dict[str, str] = {}
    for key, price in values.items():
        label = labels.get(key)
        if label is None:
            if price == TOO_EARLY_PRICE:
                label = "too early"
            elif price == PRICE_SCALE // 2 and key == "p3":
                label = "unknown/50-50"
            else:
                raise _fail(f"res_data {key}", "has a price but no label")
        meaning = _meaning(label)
        if meaning == TOO_EARLY and price != TOO_EARLY_PRICE:
            raise _fail(f"res_data {key}", "labelled too early but its price is not UMA's")
        if meaning is not None:
            if meaning in seen:
                raise _fail(f"res_data {key}", f"means {meaning}, as {seen[meaning]} does")
            seen[meaning] = key
        options.append(PriceOption(key, label, meaning, price))
    prices = [o.price for o in options]
    if len(set(prices)) != len(prices):
        raise _fail("res_data", "two outcomes share a price")
    return tuple(options)


def parse_ancillary(data: bytes, *, limit: int = ANCILLARY_BYTES_LIMIT) -> AncillaryQuestion:
    """Read UMA/Polymarket ancillary data as a question; `AncillaryDataError` naming the
    part at fault when it cannot be read exactly (see the module docstring)."""
    text = _decode(data, limit)
    body, appended = _split_appended(text)
    lead = len(body) - len(body.lstrip())
    body = body.strip()
    if body.startswith("{"):
        return _json_question(body, lead, appended)
    if not body.startswith("q:"):
        raise _fail("q", "missing: the question must start with `q:`")
    offset = lead + 2
    rest = body[2:]
    res_at = _once(rest, "res_data:", offset)
    question = rest if res_at < 0 else rest[:res_at]
    stripped = question.lstrip()
    question_offset = offset + len(question) - len(stripped)
    if stripped.startswith("title:"):
        description_at = _once(stripped, "description:", question_offset)
        _once(
            stripped if description_at < 0 else stripped[:description_at], "title:", question_offset
        )
        if description_at < 0:
            title, description = stripped[len("title:") :], ""
        else:
            title = stripped[len("title:") : description_at]
            description = stripped[description_at + len("description:") :]
        title = title.strip().removesuffix(",").strip()
    else:
        title, description = stripped, ""
    cleaned_title, cleaned_description = clean(title.strip()), clean(description.strip())
    title, description = cleaned_title.text.strip(), cleaned_description.text.strip()
    hidden = cleaned_title.removed + cleaned_description.removed
    if not title:
        raise _fail("title", "empty")
    if res_at < 0:
        return AncillaryQuestion(
            title, description, "", YES_OR_NO_DEFAULTS, False, appended, hidden
        )
    res_offset = offset + res_at + len("res_data:")
    after = rest[res_at + len("res_data:") :]
    values, early, used = _values(after, res_offset)
    labels, notes = _labels(after[used:], res_offset + used, frozenset(values))
    cleaned_labels, from_labels = clean_labels(tuple(labels.values()))
    cleaned_notes = clean(notes)
    hidden += from_labels + cleaned_notes.removed
    options = _options(values, dict(zip(labels, cleaned_labels, strict=True)))
    return AncillaryQuestion(
        title,
        description,
        cleaned_notes.text.strip(),
        options,
        True,
        appended,
        hidden,
        early_expiration=early,
    )
