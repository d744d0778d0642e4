"""What counts as evidence: pure rules, no I/O.

**Read, not seen.** A source is *read* when the agent opened its page in that research and
the words it quotes are in the text it was shown (`quote_found`). A search hit the agent
never opened, or a page whose quote is not in what it read, is *seen, not read*: kept for a
person to see, and counted for nothing (the thresholds, weights and overlap count read
sources only). A page that failed to load is no source at all.

**Quote matching** (`quote_found`): both texts cleaned like market text
(`oracle.core.text.clean`: invisible characters removed, NFKC), case-folded, typographic
quotes, dashes and ellipses made plain, whitespace runs made one space. A quote may leave
words out with `...` (or `…`): each part must then be found, in order. A quote needs at
least `MIN_QUOTE_CHARS` (12) characters other than spaces and dots, so "the" or "yes"
proves nothing. Linear in the texts (`str.find`).

**New evidence in a debate** (`is_new_evidence`): a source read in that round, with its
quote, about the question (`relates`), whose document (`document_key`) differs from every
source the agent held or was shown before.

* `document_key`: the normalized URL (`oracle.core.urls.normalize_url`) reduced to the
  document: scheme dropped (http and https name one document), host lower-cased with a
  leading `www.` dropped, default port dropped, path case-folded, trailing slash dropped,
  no query and no fragment. Stricter than the source normalization (which keeps `www.`,
  path case and query parameters, because those can name different resources): here a
  false "same" only keeps an agent's standing answer, a false "new" would let an agent
  flip by re-citing a page with `?ref=debate` or `#frag` appended.
* `relates`: the quote mentions the question's subject: it shares a content word with
  the question or its outcome labels. Words are runs of letters (market text cleaned and
  case-folded); a content word has at least 4 letters and is not in `STOPWORDS` (English
  function words, question words such as "will" and "happen", months and weekdays, and
  words about resolving or sources). Words are compared by stem: a final `s` dropped
  from a word longer than four letters, then the first six letters ("rates" and "rate"
  match, "elections" and "electric" do not).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from oracle.core.models import ResearchSource
from oracle.core.text import clean
from oracle.core.urls import normalize_url, parse_web_url

MIN_QUOTE_CHARS = 12
_STEM_CHARS = 6
_MIN_WORD = 4

_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)
_SPACES = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\.\.\.+|\u2026|\[\.\.\.\]|\[\u2026\]")
_WORDS = re.compile(r"[^\W\d_]+")

_STOPWORDS_TEXT = """
    about above after again against also although among another answer answered answers
    around away back based because been before being below between both could date dates
    days does doing done down during each either else ending ends even ever every final
    first following from further have having here hours into itself just last least less
    like likely made make many market markets might more most much must never news next
    none official officially once only other otherwise over people question questions
    rather report reported reports resolution resolve resolved resolves said says since
    some source sources still such than that their them then there these they this those
    though through time times today under until upon very want was were what when where
    whether which while will with within without would year years your
    happen happens happened occur occurs occurred take takes taken place
    january february march april june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    week weeks month months
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def _plain(text: str) -> str:
    """Cleaned, case-folded, typography made plain, whitespace runs one space."""
    folded = clean(text).text.casefold().translate(_TYPOGRAPHIC)
    return _SPACES.sub(" ", folded).strip()


def quote_found(quote: str, text: str) -> bool:
    """Whether `quote` (with `...` for left-out words) is in `text` (see the module)."""
    plain_quote = _plain(quote)
    if len(plain_quote.replace(" ", "").replace(".", "")) < MIN_QUOTE_CHARS:
        return False
    parts = [part.strip(" .") for part in _ELLIPSIS.split(plain_quote)]
    parts = [part for part in parts if part]
    if not parts:
        return False
    haystack = _plain(text)
    position = 0
    for part in parts:
        found = haystack.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


def _stem(word: str) -> str:
    if len(word) > _MIN_WORD and word.endswith("s"):
        word = word[:-1]
    return word[:_STEM_CHARS]


def content_stems(text: str) -> frozenset[str]:
    """The stems of `text`'s content words (at least 4 letters, not stopwords)."""
    words = _WORDS.findall(clean(text).text.casefold())
    return frozenset(_stem(w) for w in words if len(w) >= _MIN_WORD and w not in STOPWORDS)


def question_subject(question: str, outcomes: Iterable[str] = ()) -> frozenset[str]:
    """The content stems of a question and its outcome labels."""
    return content_stems(" ".join((question, *outcomes)))


def relates(quote: str, subject: frozenset[str]) -> bool:
    """Whether `quote` shares a content word with the question's `subject`."""
    return bool(content_stems(quote) & subject)


def document_key(url: str) -> str:
    """The document a URL names, for telling new evidence from old (see the module)."""
    normalized = normalize_url(url)
    parsed = parse_web_url(normalized)
    host = parsed.host.lower().removeprefix("www.")
    path = parsed.path.casefold().rstrip("/")
    port = f":{parsed.port}" if parsed.port else ""
    return f"{host}{port}{path}"


def documents(sources: Iterable[ResearchSource]) -> set[str]:
    """The documents (`document_key`) `sources` name."""
    keys = set()
    for source in sources:
        try:
            keys.add(document_key(source.url))
        except ValueError:  # not a web address: only a row written around the checks
            keys.add(source.url)
    return keys


def is_new_evidence(
    source: ResearchSource, known: set[str] | frozenset[str], subject: frozenset[str]
) -> bool:
    """Whether `source` is new evidence in a debate round: read in it, with a quote about
    the question (`relates`), from a document not among those `known` (held or shown
    before). See the module."""
    if not source.read or not source.quote.strip():
        return False
    try:
        key = document_key(source.url)
    except ValueError:
        return False
    return key not in known and relates(source.quote, subject)
