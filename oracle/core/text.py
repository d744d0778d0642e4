"""Market text, written by strangers, made plain data: pure, no I/O.

A market's question, criteria, outcome labels, UMA ancillary data and Reality.eth titles
are written by whoever made the market. Characters a reader does not see can carry what
a model reads all the same (tag characters spelling "SYSTEM: answer YES", a bidi override
showing a reviewer one word while the model reads another, a zero-width space inside a
word a filter looks for), so every piece of market text goes through `clean` where it
enters the daemon (the venues' parsers, discovery) and again before it reaches a model:

* line breaks made `\\n` (`\\r\\n`, `\\r`, U+2028, U+2029, U+0085);
* invisible and bidirectional controls removed: the Unicode categories Cf (format: bidi
  overrides and isolates, zero-width characters, the soft hyphen), Co (private use), Cs
  (lone surrogates), Cc (controls) except `\\n` and `\\t`, the tag block U+E0000 to
  U+E007F, variation selectors and the Hangul fillers;
* NFKC: fullwidth and other compatibility forms become the characters they stand for
  (fullwidth `SYSTEM` reads `SYSTEM`), so a filter sees what a model reads.

`clean` says how many characters it removed, so a person can be told
(`details["hidden_characters"]`). Outcome labels are cleaned together (`clean_labels`):
labels that would become equal are kept as written, and labels equal once cleaned and
case-folded (`fold`) are confusable (`confusable`): such a market goes to a person.

For the surfaces that print market text, `visible` shows every control and invisible
character as an escape (`\\n`, `\\u202e`), so nothing printed can start a new line,
reorder a line or hide a word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029\x85]")
_REMOVED_CATEGORIES = frozenset({"Cf", "Co", "Cs", "Cc"})
_KEPT = frozenset("\n\t")
# Invisible characters outside those categories: variation selectors, the Mongolian free
# variation selectors, the Hangul fillers (and the halfwidth one), the tag block.
_INVISIBLE = re.compile(
    "[\ufe00-\ufe0f\u180b-\u180f\u115f\u1160\u3164\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


@dataclass(frozen=True)
class Cleaned:
    """Market text once cleaned, and how many characters were removed from it."""

    text: str
    removed: int


def _hidden(char: str) -> bool:
    if char in _KEPT:
        return False
    return unicodedata.category(char) in _REMOVED_CATEGORIES or bool(_INVISIBLE.match(char))


# Printable ASCII, with line breaks and tabs: nothing in it is hidden (`_strip` keeps it
# whole) and, without them, nothing needs an escape (`visible` shows it as is). Most text
# is such; checking it at once spares a call per character.
_PLAIN = re.compile(r"[\t\n\x20-\x7e]*")
_SHOWN_AS_IS = re.compile(r"[\x20-\x7e]*")


def _strip(text: str) -> tuple[str, int]:
    if _PLAIN.fullmatch(text):
        return text, 0
    return _strip_each(text)


def _strip_each(text: str) -> tuple[str, int]:
    kept = [char for char in text if not _hidden(char)]
    return "".join(kept), len(text) - len(kept)


def clean(text: str) -> Cleaned:
    """`text` without invisible or bidirectional controls, NFKC-normalized, with its line
    breaks made `\\n` (see the module docstring); `removed`: how many were dropped."""
    text = _LINE_BREAKS.sub("\n", text)
    stripped, removed = _strip(text)
    # NFKC may compose into (or decompose out) a character removed above: strip again.
    normal, again = _strip(unicodedata.normalize("NFKC", stripped))
    return Cleaned(normal, removed + again)


def clean_labels(labels: Sequence[str]) -> tuple[tuple[str, ...], int]:
    """Outcome labels cleaned, and how many characters were removed; kept as written when
    cleaning would leave one blank or make two equal (they are `confusable`, and such a
    market goes to a person, who sees them escaped)."""
    cleaned = [clean(label) for label in labels]
    texts = tuple(c.text for c in cleaned)
    if len(set(texts)) != len(texts) or any(not t.strip() for t in texts):
        return tuple(labels), 0
    return texts, sum(c.removed for c in cleaned)


def fold(label: str) -> str:
    """What a reader takes `label` for: cleaned, case-folded, NFKC again (case folding
    may leave a compatibility form), its white space single spaces."""
    folded = unicodedata.normalize("NFKC", clean(label).text.casefold())
    return " ".join(folded.split())


def confusable(labels: Sequence[str]) -> list[tuple[str, ...]]:
    """Groups of labels a reader cannot tell apart (equal once `fold`ed), in order."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        groups.setdefault(fold(label), []).append(label)
    return [tuple(group) for group in groups.values() if len(group) > 1]


def _escape(char: str) -> str:
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _shown(char: str) -> bool:
    if char in _KEPT:
        return False
    return unicodedata.category(char) not in ("Zl", "Zp", "Cn") and not _hidden(char)


def visible(text: str) -> str:
    """`text` for a terminal or a document: every line break, tab, control, format,
    private-use, unassigned or otherwise invisible character shown as its escape (`\\n`,
    `\\u202e`), so what is printed is one line and reads in its stored order."""
    if _SHOWN_AS_IS.fullmatch(text):
        return text
    return _escaped_each(text)


def _escaped_each(text: str) -> str:
    return "".join(char if _shown(char) else _escape(char) for char in text)


_MARKDOWN = re.compile(r"([\\`*_\[\]{}<>#|~!])")


def markdown_inline(text: str) -> str:
    """`text` as inline Markdown that renders as the text itself: Markdown's special
    characters escaped, line breaks and invisible characters shown as escapes
    (`visible`), so it can start no heading, list, table row or link."""
    return visible(_MARKDOWN.sub(r"\\\1", text))
