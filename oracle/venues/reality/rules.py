"""Reality.eth v3 questions, answers, bonds and answer histories: pure, no I/O.

Questions. `askQuestion(template_id, question, ...)` stores only a hash; the text is in
the `LogNewQuestion` event. The built-in templates (the contract's constructor creates
them, ids 0 to 4, `TEMPLATES`) are JSON documents with `%s` placeholders; the question
text holds the values, separated by U+241F (`␟`), which fill the placeholders in order:

    0 bool             title␟category␟lang
    1 uint             title␟category␟lang            (read only when enabled)
    2 single-select    title␟outcomes␟category␟lang
    3 multiple-select  title␟outcomes␟category␟lang
    4 datetime         title␟category␟lang            (read only when enabled)

Reality.eth's own tools write the title JSON-escaped and the outcomes as a JSON list
without its brackets (`"Yes","No","Maybe"`), so the filled template is a JSON document;
it is read as one (`parse_question`), strictly: exactly one value per placeholder, each
key once (a value that smuggles in a second `"title"` is refused), the template's keys
and types, no empty title or outcome, no duplicate outcome, no control or bidirectional
formatting characters, no lone surrogate, at most `MAX_OUTCOMES` outcomes and
`QUESTION_BYTES_LIMIT` bytes. Anything else is a `RealityQuestionError` naming the field:
a question the daemon cannot read exactly goes to a person, not on-chain with a bond.
The title and labels are then market text, cleaned (`oracle.core.text.clean`: zero-width,
tag and other invisible characters removed, NFKC), the characters removed counted in
`hidden`; every reading of a question cleans it alike, so an answer's label is found
among the labels the daemon stored (`index_of`).

Answers are bytes32 (`encode_answer`, `decode_answer`): bool 1 = Yes, 0 = No; a
single-select outcome's index; a multiple-select bitmask (bit i: outcome i); a uint
scaled by its decimals; a datetime as Unix seconds. `INVALID_ANSWER` (0xff..ff) is the
convention for "invalid"; `TOO_SOON_ANSWER` (0xff..fe, v3's "answered too soon", after
which the question can be reopened) is produced only when the caller allows it.

Bonds (`bond_accepts`, `minimum_next_bond`): the first answer needs at least the
question's `min_bond` (and more than 0), every later one at least twice the current bond.

History (`history_hash`, `claim_arguments`, `claim_payouts`, `position`): every answer extends
`history_hash = keccak256(abi.encodePacked(previous hash, answer, bond, answerer,
is_commitment))`, starting from zero. `claimWinnings` walks it backwards: it takes, newest
first, the hash *before* each entry and the entry's answerer, bond and answer, and pays
the bounty and bonds to those who gave the final answer (`claim_payouts` mirrors it,
including the 1/40 withheld from each claimed bond but the last; v2.1 queues the bounty
with the bonds instead of paying it at once, `bounty_queued`).
`batch_claim_arguments` puts several questions' walks into one
`claimMultipleAndWithdrawBalance`.

Contract versions: v3 (`RealityETH_v3_0`, and `RealityETH_ERC20_v3_0`, whose bonds are
an ERC-20 token) and v2.1 (`Realitio_v2_1`, where Omen asks on Gnosis chain: no minimum
bond, no "answered too soon", question ids without the contract's address,
`question_id_v2_1`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum

from eth_utils.crypto import keccak

from oracle.core import outcomes as _shared
from oracle.core.text import clean, clean_labels
from oracle.core.values import ValueFormat, int_to_value, value_to_int
from oracle.errors import RealityQuestionError

DELIMITER = "\u241f"
QUESTION_BYTES_LIMIT = 65_536  # Reality.eth sets none; a question longer than this is hostile
MAX_OUTCOMES = 256  # a multiple-select answer is a 256-bit mask
MAX_FIELD_CHARS = 256  # category and language
UINT256_MAX = 2**256 - 1
INVALID_ANSWER = b"\xff" * 32
TOO_SOON_ANSWER = b"\xff" * 31 + b"\xfe"  # RealityETH_v3_0.UNRESOLVED_ANSWER
NULL_HASH = b"\x00" * 32
BOND_CLAIM_FEE_PROPORTION = 40  # 1/40 of each claimed bond but the last stays in the contract

# The daemon's names for the answers (the shared ones from `oracle.core.outcomes`).
YES = _shared.YES
NO = _shared.NO
INVALID = _shared.INVALID
TOO_EARLY = "TOO_EARLY"  # Reality.eth's "answered too soon"


class QuestionKind(Enum):
    BOOL = "bool"
    UINT = "uint"
    SINGLE_SELECT = "single-select"
    MULTIPLE_SELECT = "multiple-select"
    DATETIME = "datetime"


# The contract's constructor creates these, in this order (RealityETH_v3_0).
TEMPLATES: dict[int, str] = {
    0: '{"title": "%s", "type": "bool", "category": "%s", "lang": "%s"}',
    1: '{"title": "%s", "type": "uint", "decimals": 18, "category": "%s", "lang": "%s"}',
    2: '{"title": "%s", "type": "single-select", "outcomes": [%s], "category": "%s", "lang": "%s"}',
    3: '{"title": "%s", "type": "multiple-select", "outcomes": [%s], "category": "%s", '
    '"lang": "%s"}',
    4: '{"title": "%s", "type": "datetime", "category": "%s", "lang": "%s"}',
}
TEMPLATE_KINDS = {
    0: QuestionKind.BOOL,
    1: QuestionKind.UINT,
    2: QuestionKind.SINGLE_SELECT,
    3: QuestionKind.MULTIPLE_SELECT,
    4: QuestionKind.DATETIME,
}
DEFAULT_TEMPLATES = frozenset({0, 2, 3})  # uint and datetime only when configured
_SELECTS = (QuestionKind.SINGLE_SELECT, QuestionKind.MULTIPLE_SELECT)
_KEYS = {
    QuestionKind.BOOL: ("title", "type", "category", "lang"),
    QuestionKind.UINT: ("title", "type", "decimals", "category", "lang"),
    QuestionKind.SINGLE_SELECT: ("title", "type", "outcomes", "category", "lang"),
    QuestionKind.MULTIPLE_SELECT: ("title", "type", "outcomes", "category", "lang"),
    QuestionKind.DATETIME: ("title", "type", "category", "lang"),
}
# C0 and C1 controls (but tab, line feed, carriage return), DEL, and the bidirectional
# formatting characters that can make text read differently from what it says.
_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _fail(field: str, problem: str) -> RealityQuestionError:
    return RealityQuestionError(f"reality question: {field}: {problem}")


@dataclass(frozen=True)
class RealityQuestion:
    """A question read from one of the built-in templates (see the module docstring)."""

    template_id: int
    kind: QuestionKind
    title: str
    outcomes: tuple[str, ...]  # the selects' labels; () for the other kinds
    category: str
    language: str
    decimals: int = 0  # uint: the answer is the number times 10**decimals
    hidden: int = 0  # invisible characters removed from the title and labels

    @property
    def labels(self) -> tuple[str, ...]:
        """What an answer may name: the outcomes, or Yes and No for a bool."""
        return ("Yes", "No") if self.kind == QuestionKind.BOOL else self.outcomes

    def index_of(self, outcome: str) -> int:
        """The position of `outcome` among the outcomes: exactly as written, else the one
        label equal to it ignoring case; `RealityQuestionError` when none (or two) is."""
        if outcome in self.outcomes:
            return self.outcomes.index(outcome)
        folded = [
            i for i, label in enumerate(self.outcomes) if label.casefold() == outcome.casefold()
        ]
        if len(folded) != 1:
            why = "matches two outcomes ignoring case" if folded else "is not an outcome"
            raise _fail("answer", f"{outcome!r:.80} {why} ({len(self.outcomes)} outcomes)")
        return folded[0]


# --- reading questions ----------------------------------------------------------------------


def _decode(text: bytes | str) -> str:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if len(raw) > QUESTION_BYTES_LIMIT:
            raise _fail("text", f"{len(raw)} bytes, more than the limit of {QUESTION_BYTES_LIMIT}")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _fail("text", f"not UTF-8 (invalid byte at offset {error.start})") from None
    if not isinstance(text, str):
        raise _fail("text", f"expected bytes or str, got {type(text).__name__}")
    if _SURROGATE.search(text):
        raise _fail("text", "holds a lone surrogate, not text")
    if len(text.encode("utf-8")) > QUESTION_BYTES_LIMIT:
        raise _fail("text", f"more than the limit of {QUESTION_BYTES_LIMIT} bytes")
    return text


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise _fail(key if len(key) <= 40 else "key", "appears twice")
        seen[key] = value
    return seen


def _clean(field: str, value: object, *, empty: bool = True, limit: int | None = None) -> str:
    if not isinstance(value, str):
        raise _fail(field, f"expected a string, got {type(value).__name__}")
    if _SURROGATE.search(value):
        raise _fail(field, "holds a lone surrogate, not text")
    bad = _FORBIDDEN.search(value)
    if bad is not None:
        raise _fail(field, f"control or formatting character U+{ord(bad[0]):04X}")
    if not empty and not value.strip():
        raise _fail(field, "empty")
    if limit is not None and len(value) > limit:
        raise _fail(field, f"longer than {limit} characters")
    return value


def parse_question(
    template_id: int, text: bytes | str, *, templates: Iterable[int] = DEFAULT_TEMPLATES
) -> RealityQuestion:
    """Read a question asked with a built-in template (see the module docstring);
    `templates`: the ids the caller reads (uint and datetime are off by default)."""
    enabled = frozenset(templates)
    if template_id not in TEMPLATES:
        raise _fail("template", f"{template_id} is not a built-in template (0 to 4)")
    kind = TEMPLATE_KINDS[template_id]
    if template_id not in enabled:
        raise _fail("template", f"{template_id} ({kind.value}) is not enabled")
    decoded = _decode(text)
    values = decoded.split(DELIMITER)
    template = TEMPLATES[template_id]
    placeholders = template.count("%s")
    if len(values) != placeholders:
        fields = "title, outcomes, category, lang" if kind in _SELECTS else "title, category, lang"
        raise _fail(
            "text",
            f"{len(values)} fields separated by U+241F, the {kind.value} template takes "
            f"{placeholders} ({fields})",
        )
    parts = template.split("%s")
    filled = parts[0] + "".join(v + p for v, p in zip(values, parts[1:], strict=True))
    try:
        document = json.loads(filled, object_pairs_hook=_unique_keys)
    except RealityQuestionError:
        raise
    except RecursionError:
        raise _fail("text", "nested too deeply") from None
    except ValueError as error:
        where = getattr(error, "pos", None)
        field = _field_at(parts, values, where) if isinstance(where, int) else "text"
        raise _fail(
            field, "not valid once placed in its template (a quote or backslash?)"
        ) from None
    if not isinstance(document, dict) or tuple(document) != _KEYS[kind]:
        raise _fail("text", f"does not fill the {kind.value} template's fields exactly")
    if document["type"] != kind.value:
        raise _fail("type", f"expected {kind.value}")
    cleaned_title = clean(_clean("title", document["title"], empty=False))
    title, hidden = cleaned_title.text, cleaned_title.removed
    if not title.strip():
        raise _fail("title", "empty once its invisible characters are removed")
    category = _clean("category", document["category"], limit=MAX_FIELD_CHARS)
    language = _clean("lang", document["lang"], limit=MAX_FIELD_CHARS)
    outcomes: tuple[str, ...] = ()
    if kind in _SELECTS:
        outcomes, from_labels = _outcomes(document["outcomes"])
        hidden += from_labels
    decimals = int(document["decimals"]) if kind == QuestionKind.UINT else 0
    return RealityQuestion(template_id, kind, title, outcomes, category, language, decimals, hidden)


def _outcomes(listed: object) -> tuple[tuple[str, ...], int]:
    """A select's labels, cleaned, and how many characters cleaning removed."""
    if not isinstance(listed, list):  # pragma: no cover - the template's brackets
        raise _fail("outcomes", "not a list")
    if len(listed) < 2:
        raise _fail("outcomes", f"{len(listed)} given, at least 2 needed")
    if len(listed) > MAX_OUTCOMES:
        raise _fail("outcomes", f"{len(listed)} given, at most {MAX_OUTCOMES}")
    outcomes = tuple(
        _clean(f"outcomes: label {i}", label, empty=False) for i, label in enumerate(listed)
    )
    if len(set(outcomes)) != len(outcomes):
        repeated = next(i for i, label in enumerate(outcomes) if outcomes.index(label) != i)
        raise _fail("outcomes", f"label {repeated} repeats an earlier one")
    return clean_labels(outcomes)


def _field_at(parts: list[str], values: list[str], position: int) -> str:
    """The template field whose value (or the template text right after it, where a stray
    quote shows) holds `position` of the filled template."""
    names = re.findall(r'"(\w+)": \[?"?%s', "%s".join(parts))
    offset = len(parts[0])
    for name, value, part in zip(names, values, parts[1:], strict=False):
        offset += len(value) + len(part)
        if position < offset:
            return str(name)
    return "text"


def encode_question_text(
    kind: QuestionKind,
    title: str,
    *,
    outcomes: Sequence[str] = (),
    category: str = "",
    language: str = "en_US",
) -> str:
    """The question text Reality.eth's tools write for a built-in template: the title
    JSON-escaped, the outcomes as a JSON list without brackets, then category and lang.
    A value holding the field separator U+241F is refused (ValueError): the text would read
    back as other fields (`parse_question` refuses it)."""
    for name, value in (("title", title), ("category", category), ("language", language)):
        if DELIMITER in value:
            raise ValueError(f"{name}: holds the field separator U+241F")
    for index, outcome in enumerate(outcomes):
        if DELIMITER in outcome:
            raise ValueError(f"outcomes[{index}]: holds the field separator U+241F")
    escaped = json.dumps(title, ensure_ascii=False)[1:-1]
    fields = [escaped]
    if kind in _SELECTS:
        fields.append(json.dumps(list(outcomes), ensure_ascii=False)[1:-1])
    fields += [category, language]
    return DELIMITER.join(fields)


def template_id_of(kind: QuestionKind) -> int:
    return next(i for i, k in TEMPLATE_KINDS.items() if k == kind)


# --- answers --------------------------------------------------------------------------------


def _word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _reserved(value: int) -> bool:
    return value >= UINT256_MAX - 1


def encode_answer(
    question: RealityQuestion,
    outcome: str | int | Decimal | Sequence[str],
    *,
    allow_too_soon: bool = False,
) -> bytes:
    """The bytes32 answer for `outcome`: INVALID and TOO_EARLY (only with
    `allow_too_soon`) for any kind; YES / NO (any case) for a bool; a label for a
    single-select; labels for a multiple-select; a number (int, Decimal or its text) for a
    uint, scaled by its decimals; Unix seconds for a datetime."""
    if isinstance(outcome, str) and outcome.upper() == INVALID:
        return INVALID_ANSWER
    if isinstance(outcome, str) and outcome.upper() == TOO_EARLY:
        if not allow_too_soon:
            raise _fail("answer", "answered-too-soon is never given unless the venue allows it")
        return TOO_SOON_ANSWER
    match question.kind:
        case QuestionKind.BOOL:
            if not isinstance(outcome, str) or outcome.upper() not in (YES, NO):
                raise _fail("answer", "a bool question takes YES, NO or INVALID")
            return _word(1 if outcome.upper() == YES else 0)
        case QuestionKind.SINGLE_SELECT:
            if not isinstance(outcome, str):
                raise _fail("answer", "a single-select question takes one outcome's label")
            return _word(question.index_of(outcome))
        case QuestionKind.MULTIPLE_SELECT:
            if isinstance(outcome, str) or not isinstance(outcome, Sequence) or not outcome:
                raise _fail("answer", "a multiple-select question takes a list of labels")
            mask = 0
            for label in outcome:
                if not isinstance(label, str):
                    raise _fail("answer", "a multiple-select question takes labels")
                mask |= 1 << question.index_of(label)
            return _word(mask)
        case QuestionKind.UINT:
            return _word(_scaled(question, outcome))
        case QuestionKind.DATETIME:
            if isinstance(outcome, bool) or not isinstance(outcome, int) or outcome < 0:
                raise _fail("answer", "a datetime question takes Unix seconds (an int >= 0)")
            if _reserved(outcome):
                raise _fail("answer", "that time is one of the reserved answers")
            return _word(outcome)
    raise AssertionError(question.kind)  # pragma: no cover - every kind is matched


def _scaled(question: RealityQuestion, outcome: object) -> int:
    if isinstance(outcome, bool) or not isinstance(outcome, int | Decimal | str):
        raise _fail("answer", "a uint question takes a number")
    try:
        number = Decimal(outcome)
    except InvalidOperation:
        raise _fail("answer", "a uint question takes a number") from None
    if not number.is_finite() or number < 0:
        raise _fail("answer", "a uint question takes a number >= 0")
    scaled = number.scaleb(question.decimals)
    if scaled != scaled.to_integral_value():
        raise _fail("answer", f"more than {question.decimals} decimals")
    value = int(scaled)
    if value > UINT256_MAX or _reserved(value):
        raise _fail("answer", "too large (or one of the reserved answers)")
    return value


@dataclass(frozen=True)
class DecodedAnswer:
    """A bytes32 answer read against its question: `outcome` is YES / NO for a bool, the
    label for a single-select, INVALID or TOO_EARLY for the reserved values, None
    otherwise; `selected` the labels of a multiple-select; `value` the integer."""

    raw: bytes
    value: int
    outcome: str | None = None
    selected: tuple[str, ...] = ()

    @property
    def number(self) -> Decimal:
        """The value as a number (a uint question's, before scaling)."""
        return Decimal(self.value)


def decode_answer(question: RealityQuestion, answer: bytes) -> DecodedAnswer:
    """Read a bytes32 answer against `question`; `RealityQuestionError` for a value the
    question does not offer (a bool 2, an index past the outcomes)."""
    raw = bytes(answer)
    if len(raw) != 32:
        raise _fail("answer", f"{len(raw)} bytes, expected 32")
    value = int.from_bytes(raw, "big")
    if raw == INVALID_ANSWER:
        return DecodedAnswer(raw, value, INVALID)
    if raw == TOO_SOON_ANSWER:
        return DecodedAnswer(raw, value, TOO_EARLY)
    match question.kind:
        case QuestionKind.BOOL:
            if value > 1:
                raise _fail("answer", f"{value} is not a bool answer (0 or 1)")
            return DecodedAnswer(raw, value, YES if value == 1 else NO)
        case QuestionKind.SINGLE_SELECT:
            if value >= len(question.outcomes):
                raise _fail(
                    "answer", f"index {value} is past the {len(question.outcomes)} outcomes"
                )
            return DecodedAnswer(raw, value, question.outcomes[value])
        case QuestionKind.MULTIPLE_SELECT:
            if value >> len(question.outcomes):
                raise _fail("answer", f"selects past the {len(question.outcomes)} outcomes")
            chosen = tuple(o for i, o in enumerate(question.outcomes) if value >> i & 1)
            return DecodedAnswer(raw, value, None, chosen)
        case QuestionKind.UINT:
            return DecodedAnswer(raw, value)
        case QuestionKind.DATETIME:
            return DecodedAnswer(raw, value)
    raise AssertionError(question.kind)  # pragma: no cover - every kind is matched


# --- answers as the daemon names them -------------------------------------------------------


def value_format_of(question: RealityQuestion) -> ValueFormat | None:
    """How the agents answer `question` when its answer is a value (`oracle.core.values`):
    a uint is a number with the template's decimals, a datetime a moment, a
    multiple-select a set of its outcomes; None for a bool or single-select (a label)."""
    if question.kind == QuestionKind.UINT:
        return ValueFormat(kind="number", decimals=question.decimals)
    if question.kind == QuestionKind.DATETIME:
        # Template 4 names no precision: Reality.eth's tools then take a day (their
        # `getAnswerString` marks a finer time "[Invalid datetime]").
        return ValueFormat(kind="datetime", precision="d")
    if question.kind == QuestionKind.MULTIPLE_SELECT:
        return ValueFormat(kind="set")
    return None


def encode_value(question: RealityQuestion, outcome: str, *, allow_too_soon: bool = False) -> bytes:
    """The bytes32 answer for the daemon's outcome text: INVALID and TOO_EARLY (only with
    `allow_too_soon`) as `encode_answer`; a label for a bool or single-select; a value in
    the question's format (`value_format_of`: a number scaled by the template's decimals,
    a time as Unix seconds, a set as its bitmask), which may not be a reserved answer."""
    values = value_format_of(question)
    if values is None or outcome.upper() in (INVALID, TOO_EARLY):
        return encode_answer(question, outcome, allow_too_soon=allow_too_soon)
    try:
        value = value_to_int(values, outcome, question.outcomes)
    except ValueError as error:
        raise _fail("answer", str(error)) from None
    if _reserved(value):
        raise _fail("answer", "that value is one of the reserved answers")
    return _word(value)


def decode_value(question: RealityQuestion, answer: bytes) -> str:
    """The daemon's outcome text for a bytes32 answer, the inverse of `encode_value`:
    INVALID, TOO_EARLY, a label, or a value's canonical spelling; `RealityQuestionError`
    for an answer that names none (a bool 2, a bitmask past the outcomes, a time after
    the year 9999)."""
    decoded = decode_answer(question, answer)
    if decoded.outcome is not None:
        return decoded.outcome
    values = value_format_of(question)
    assert values is not None  # every label kind decodes to an outcome
    try:
        return int_to_value(values, decoded.value, question.outcomes)
    except ValueError as error:
        raise _fail("answer", str(error)) from None


# --- bonds ----------------------------------------------------------------------------------


def bond_accepts(bond: int, current_bond: int, min_bond: int) -> bool:
    """Whether `submitAnswer` takes `bond` (its `bondMustDoubleAndMatchMinimum`): more
    than 0, at least `min_bond` for the first answer, at least twice the current bond
    after that."""
    if bond <= 0:
        return False
    return bond >= min_bond if current_bond == 0 else bond >= 2 * current_bond


def minimum_next_bond(current_bond: int, min_bond: int) -> int:
    """The smallest bond the next answer may post: max(min_bond, 2 x current, 1). (Once
    answered, the current bond is at least `min_bond`, so this is the contract's rule.)"""
    if current_bond < 0 or min_bond < 0:
        raise ValueError("bonds are never negative")
    return max(min_bond, 2 * current_bond, 1)


# --- question ids ---------------------------------------------------------------------------


def _address(value: str) -> bytes:
    text = value.removeprefix("0x")
    if len(text) != 40:
        raise ValueError(f"address {value!r:.50}: expected 20 bytes of hex")
    return bytes.fromhex(text)


def content_hash(template_id: int, opening_ts: int, question: str) -> bytes:
    """`keccak256(abi.encodePacked(template_id, opening_ts, question))`."""
    return keccak(_word(template_id) + opening_ts.to_bytes(4, "big") + question.encode("utf-8"))


def question_id(
    *,
    template_id: int,
    opening_ts: int,
    question: str,
    arbitrator: str,
    timeout: int,
    min_bond: int,
    contract: str,
    asker: str,
    nonce: int,
) -> bytes:
    """The id `askQuestion` (min_bond 0) or `askQuestionWithMinBond` gives a question."""
    packed = (
        content_hash(template_id, opening_ts, question)
        + _address(arbitrator)
        + timeout.to_bytes(4, "big")
        + _word(min_bond)
        + _address(contract)
        + _address(asker)
        + _word(nonce)
    )
    return keccak(packed)


def question_id_v2_1(
    *,
    template_id: int,
    opening_ts: int,
    question: str,
    arbitrator: str,
    timeout: int,
    asker: str,
    nonce: int,
) -> bytes:
    """The id Reality.eth v2.1's `askQuestion` gives a question (`Realitio_v2_1`: no
    minimum bond and no contract address in it)."""
    packed = (
        content_hash(template_id, opening_ts, question)
        + _address(arbitrator)
        + timeout.to_bytes(4, "big")
        + _address(asker)
        + _word(nonce)
    )
    return keccak(packed)


# --- commitments ----------------------------------------------------------------------------


def answer_hash(answer: bytes, nonce: int) -> bytes:
    """`keccak256(abi.encodePacked(answer, nonce))`: what `submitAnswerCommitment` posts."""
    return keccak(bytes(answer) + _word(nonce))


def commitment_id(question: bytes, hashed_answer: bytes, bond: int) -> bytes:
    """`keccak256(abi.encodePacked(question_id, answer_hash, bond))`: the commitment's id,
    which stands in the history where the answer would."""
    return keccak(bytes(question) + bytes(hashed_answer) + _word(bond))


# --- answer history -------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryEntry:
    """One entry of a question's answer history, as its `LogNewAnswer` shows it:
    `answer` is the commitment id for a commitment; an arbitrator's answer has bond 0."""

    answer: bytes
    bond: int
    answerer: str
    is_commitment: bool = False

    def __post_init__(self) -> None:
        if len(self.answer) != 32:
            raise ValueError("answer: expected 32 bytes")
        if not 0 <= self.bond <= UINT256_MAX:
            raise ValueError("bond: expected a uint256")
        _address(self.answerer)


def history_hash(previous: bytes, entry: HistoryEntry) -> bytes:
    """`keccak256(abi.encodePacked(previous, answer, bond, answerer, is_commitment))`."""
    packed = (
        previous
        + entry.answer
        + _word(entry.bond)
        + _address(entry.answerer)
        + (b"\x01" if entry.is_commitment else b"\x00")
    )
    return keccak(packed)


def history_hashes(entries: Sequence[HistoryEntry]) -> list[bytes]:
    """The history hash after each entry, oldest first (the last is the question's)."""
    hashes: list[bytes] = []
    current = NULL_HASH
    for entry in entries:
        current = history_hash(current, entry)
        hashes.append(current)
    return hashes


@dataclass(frozen=True)
class ClaimArguments:
    """`claimWinnings(question_id, history_hashes, addrs, bonds, answers)`'s lists, newest
    entry first; `history_hashes[i]` is the hash before entry i (zero for the first)."""

    history_hashes: tuple[bytes, ...]
    addrs: tuple[str, ...]
    bonds: tuple[int, ...]
    answers: tuple[bytes, ...]

    def args(self, question: bytes) -> tuple[bytes, list[bytes], list[str], list[int], list[bytes]]:
        return (
            question,
            list(self.history_hashes),
            list(self.addrs),
            list(self.bonds),
            list(self.answers),
        )


def claim_arguments(entries: Sequence[HistoryEntry], current_hash: bytes) -> ClaimArguments:
    """What `claimWinnings` needs to walk the history (oldest first in `entries`) back from
    `current_hash`, the question's history hash now: all of it, or (after a partial claim)
    the entries up to the one whose hash that is. `ValueError` when no entry's hash is
    `current_hash` (the history is incomplete) or there is nothing left to claim."""
    if current_hash == NULL_HASH:
        raise ValueError("nothing to claim: the history hash is zero (claimed already)")
    hashes = history_hashes(entries)
    try:
        last = hashes.index(current_hash)
    except ValueError:
        raise ValueError(
            f"the {len(entries)} entries given never reach the question's history hash "
            f"0x{current_hash.hex()}: the history is incomplete"
        ) from None
    before = [NULL_HASH, *hashes[:last]]
    kept = list(entries[: last + 1])
    return ClaimArguments(
        history_hashes=tuple(reversed(before)),
        addrs=tuple(e.answerer for e in reversed(kept)),
        bonds=tuple(e.bond for e in reversed(kept)),
        answers=tuple(e.answer for e in reversed(kept)),
    )


@dataclass(frozen=True)
class BatchClaimArguments:
    """`claimMultipleAndWithdrawBalance(question_ids, lengths, hist_hashes, addrs, bonds,
    answers)`'s lists: each question's `ClaimArguments` one after the other, `lengths`
    saying how many entries each has."""

    question_ids: tuple[bytes, ...]
    lengths: tuple[int, ...]
    history_hashes: tuple[bytes, ...]
    addrs: tuple[str, ...]
    bonds: tuple[int, ...]
    answers: tuple[bytes, ...]

    def args(
        self,
    ) -> tuple[list[bytes], list[int], list[bytes], list[str], list[int], list[bytes]]:
        return (
            list(self.question_ids),
            list(self.lengths),
            list(self.history_hashes),
            list(self.addrs),
            list(self.bonds),
            list(self.answers),
        )


def batch_claim_arguments(
    claims: Sequence[tuple[bytes, ClaimArguments]],
) -> BatchClaimArguments:
    """One `claimMultipleAndWithdrawBalance` for the questions of `claims` (each question id
    with its `claim_arguments`), in order; `ValueError` for none or a question twice (its
    second walk would start from a cleared history and revert the whole batch)."""
    if not claims:
        raise ValueError("nothing to claim: no question given")
    ids = [bytes(question) for question, _ in claims]
    for question in ids:
        if len(question) != 32:
            raise ValueError("question id: expected 32 bytes")
    if len(set(ids)) != len(ids):
        raise ValueError("a question is given twice: the second walk would revert the batch")
    return BatchClaimArguments(
        question_ids=tuple(ids),
        lengths=tuple(len(arguments.bonds) for _, arguments in claims),
        history_hashes=tuple(h for _, a in claims for h in a.history_hashes),
        addrs=tuple(who for _, a in claims for who in a.addrs),
        bonds=tuple(bond for _, a in claims for bond in a.bonds),
        answers=tuple(answer for _, a in claims for answer in a.answers),
    )


def claim_payouts(
    entries: Sequence[HistoryEntry],
    *,
    best_answer: bytes,
    final_bond: int,
    bounty: int = 0,
    revealed: Mapping[bytes, bytes] | None = None,
    bounty_queued: bool = False,
) -> dict[str, int]:
    """What one full `claimWinnings` credits to each answerer (lowercase address), as the
    contract computes it: walking newest to oldest, the first entry with the final answer
    takes the bounty and the bonds above it; an earlier answerer of the same final answer
    takes over, paid its own bond's worth from what was queued; every claimed bond but
    the final one (`final_bond`, the question's bond) loses 1/40. `revealed` maps the
    commitment ids that were revealed to their answers (others are wrong).
    `bounty_queued`: v2.1's rule (`Realitio_v2_1`), where the bounty joins the queued
    funds (so a takeover is paid from it and it stays with the later answerer) instead of
    being paid at once (v3, and never for "answered too soon")."""
    opened = revealed or {}
    credits: dict[str, int] = {}
    payee: str | None = None
    queued = 0
    last_bond = 0

    def pay(address: str | None, amount: int) -> None:
        who = (address or "0x" + "00" * 20).lower()
        credits[who] = credits.get(who, 0) + amount

    for entry in reversed(entries):
        queued += last_bond
        answer: bytes | None = entry.answer
        if entry.is_commitment:
            answer = opened.get(entry.answer)
        if answer is not None and answer == best_answer:
            if payee is None:
                payee = entry.answerer
                if bounty_queued:
                    queued += bounty
                elif best_answer != TOO_SOON_ANSWER and bounty > 0:
                    pay(payee, bounty)
            elif entry.answerer.lower() != payee.lower():
                takeover = min(entry.bond, queued)
                pay(payee, queued - takeover)
                payee = entry.answerer
                queued = takeover
        last_bond = entry.bond
        if last_bond != final_bond:
            last_bond -= last_bond // BOND_CLAIM_FEE_PROPORTION
    pay(payee, queued + last_bond)
    return {who: amount for who, amount in credits.items() if amount}


@dataclass(frozen=True)
class Position:
    """One account's stake in a question's history, should the current best answer stand:
    `posted` its bonds in total, `at_risk` those posted on another answer (lost), and
    `claimable` what a claim would credit it (`claim_payouts`)."""

    posted: int
    at_risk: int
    claimable: int


def position(
    entries: Sequence[HistoryEntry],
    account: str,
    *,
    best_answer: bytes,
    final_bond: int,
    bounty: int = 0,
) -> Position:
    """`account`'s `Position` in the history `entries` (oldest first); for the metrics of
    bonds at risk and claimable (commitments count as their commitment id: unrevealed)."""
    who = account.lower()
    ours = [e for e in entries if e.answerer.lower() == who]
    credits = claim_payouts(entries, best_answer=best_answer, final_bond=final_bond, bounty=bounty)
    return Position(
        posted=sum(e.bond for e in ours),
        at_risk=sum(e.bond for e in ours if e.is_commitment or e.answer != best_answer),
        claimable=credits.get(who, 0),
    )


# --- question state -------------------------------------------------------------------------


class Phase(Enum):
    """Where a question stands at a given time (`phase`)."""

    NOT_ASKED = "not asked"
    NOT_OPEN = "not open yet"
    OPEN = "open"
    PENDING_ARBITRATION = "pending arbitration"
    FINALIZED = "finalized"


def phase(
    *, timeout: int, opening_ts: int, finalize_ts: int, pending_arbitration: bool, now: int
) -> Phase:
    """The contract's `stateOpen` / `isFinalized` at block time `now`."""
    if timeout == 0:
        return Phase.NOT_ASKED
    if pending_arbitration:
        return Phase.PENDING_ARBITRATION
    if finalize_ts != 0 and finalize_ts <= now:
        return Phase.FINALIZED
    if opening_ts != 0 and opening_ts > now:
        return Phase.NOT_OPEN
    return Phase.OPEN
