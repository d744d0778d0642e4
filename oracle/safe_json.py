"""JSON from outside (HTTP bodies, model output, files given to the CLI), decoded safely.

`json.loads` recurses in C once per level of nesting. The chain stack raises the
interpreter's recursion limit to 100,000 when it is imported (py_ecc does), and under that
limit a body of some 70 KB of `[` overflows the thread stack: the process dies by
SIGSEGV instead of raising. :func:`loads` measures the nesting first, in time linear in the
input (strings dropped by one regular expression, brackets kept by `bytes.translate`,
then a running sum, all in C), and refuses anything nested deeper than `max_depth` before
the C decoder sees it. It also turns every other way decoding can fail (not JSON, bytes
that are not UTF-8, an integer longer than Python converts) into :class:`JsonError`,
and replaces lone UTF-16 surrogates (`"\\ud800"`, valid JSON but not text) with U+FFFD,
so what it returns can be encoded, stored and sent on. `NaN` and `Infinity` (not JSON,
but Python's decoder takes them) come back as floats, as do numbers too large for one
(as infinity): whoever uses a number checks that it is finite (the core's validation
names them; the data agent and the HTTP venue refuse them).

Every decode of outside JSON goes through :func:`loads`; the model SDKs decode their own
responses, so their HTTP client checks each body with :func:`check_nesting` first.
"""

from __future__ import annotations

import contextlib
import json
import re
from array import array
from itertools import accumulate
from typing import Any

import orjson

from oracle.errors import JsonError, JsonTooDeep

MAX_DEPTH = 100

# A JSON string, or an unterminated one up to the end of the text. Possessive, and every
# character after the opening quote is taken by one branch, so each string is scanned once.
_STRING = re.compile(r'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.DOTALL)
# Outside strings only brackets matter: each becomes a signed byte, +1 opening, -1 closing.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Every escape, so that `\\ud800` (an escaped backslash, then text) is not read as one;
# a surrogate escape is kept only as the high half of a pair followed by its low half.
_ESCAPE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[dD][89a-fA-F][0-9a-fA-F]{2}|.)",
    re.DOTALL,
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# Every byte but `"`, `\\` and the brackets: dropped before the strings are told apart.
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"\\[]{}')
# An integer orjson would read as a float (beyond 64 bits) has at least 19 digits.
_LONG_DIGITS = b"0" * 19
# One pass over a text's bytes for both of `loads`' scans: each digit as `0` (for a run of
# `_LONG_DIGITS`), quotes, backslashes and brackets as they are (for the nesting), every
# other byte a space (`_UNSCANNED`: dropped instead).
_SCAN = bytes(
    ord("0") if byte in b"0123456789" else byte if byte in b'"\\[]{}' else ord(" ")
    for byte in range(256)
)
_UNSCANNED = bytes(byte for byte in range(256) if _SCAN[byte] == ord(" "))


def _steps(text: str) -> bytes:
    outside_strings = _STRING.sub("", text).encode("utf-8", "surrogatepass")
    return outside_strings.translate(_STEPS, _NOT_BRACKETS)


def _quick_steps(
    text: str, data: bytes | None = None, structure: bytes | None = None
) -> bytes | None:
    """`_steps(text)` by plain byte operations (no regular expression over the strings);
    None when the text has a backslash outside its strings, which only `_steps` reads as
    the decoder does. Escaped backslashes and quotes are masked first, so every `"` left
    opens or closes a string (a final unterminated string runs to the end, as in `_STRING`).
    Once all but quotes, backslashes and brackets are dropped, each `""` is a string with
    none of them, or two strings with nothing between them: both go without changing what
    is outside, and few quotes are left to split on. `data`: the text encoded as UTF-8 with
    surrogates passed, when the caller has it; `structure`: `_structure` of it, when the
    caller has that."""
    if structure is None:
        structure = _structure(text.encode("utf-8", "surrogatepass") if data is None else data)
    # Commonly every string is `""` here (none holds a bracket, a quote or a backslash):
    # then every quote is in one of the non-overlapping `""` found left to right (the first
    # quote opens a string, so a `""` starts there, and so on), and counting them shows it
    # at a fraction of the cost of removing them.
    if structure.count(b'""') * 2 != structure.count(b'"'):
        structure = structure.replace(b'""', b"")
        # Splitting makes an object of every string: half the time of decoding a large
        # document; few are left once each `""` is gone.
        if b'"' in structure:
            structure = b"".join(structure.split(b'"')[::2])
    if b"\\" in structure:
        return None
    return structure.translate(_STEPS, _NOT_BRACKETS)


def _structure(data: bytes) -> bytes:
    """`data` (UTF-8, or `_SCAN` of it) reduced to its quotes, backslashes and brackets,
    escaped backslashes and quotes masked (see `_quick_steps`)."""
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"\\")
    return data.translate(None, _NOT_STRUCTURE)


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text`, brackets inside strings not
    counted: at least as deep as the C decoder recurses before it accepts or rejects it."""
    return _depth(_text_steps(text))


def _text_steps(text: str, data: bytes | None = None, structure: bytes | None = None) -> bytes:
    steps = _quick_steps(text, data, structure)
    return _steps(text) if steps is None else steps


def _depth(steps: bytes) -> int:
    return max(0, max(accumulate(array("b", steps)), default=0))


_SHORT = 16_384
# An opening bracket's step then a closing one's: a nesting at its deepest.
_INNERMOST = b"\x01\xff"
_PEELS = 16


def _nesting_within(steps: bytes, max_depth: int) -> bool:
    """Whether the nesting `steps` spell is at most `max_depth` deep. Removing every
    innermost pair (`_INNERMOST`) lowers the depth by at most one, so a few such passes
    (each a C `bytes.replace` over what is left) bound a common document's depth with
    little or nothing left to count step by step; only a document that bound does not
    clear is counted in full."""
    remainder, peeled = steps, 0
    while peeled < _PEELS and _INNERMOST in remainder:
        remainder = remainder.replace(_INNERMOST, b"")
        peeled += 1
    return peeled + _depth(remainder) <= max_depth or _depth(steps) <= max_depth


def check_nesting(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> None:
    """Raise JsonTooDeep when `data`, decoded as `json.loads` decodes it, nests arrays and
    objects deeper than `max_depth`."""
    if isinstance(data, bytes | bytearray):
        if data.count(b"[") + data.count(b"{") <= max_depth:
            return
        try:  # as json.loads reads bytes; what it cannot decode it never parses
            text = bytes(data).decode(json.detect_encoding(data), "surrogatepass")
        except UnicodeDecodeError:
            return
    else:
        text = data
    _check_text_nesting(text, text.encode("utf-8", "surrogatepass"), max_depth)


def _check_text_nesting(
    text: str, encoded: bytes, max_depth: int, structure: bytes | None = None
) -> None:
    """`check_nesting(text)`, given `encoded`: `text` in UTF-8 with surrogates passed;
    `structure`: `_structure` of it, when the caller has it."""
    # Counting every bracket settles a short text; a long one is measured at once (the
    # count would seldom settle it, and costs a fifth of the measure).
    counted = encoded if structure is None else structure
    if len(encoded) <= _SHORT and counted.count(b"[") + counted.count(b"{") <= max_depth:
        return
    if not _nesting_within(_text_steps(text, encoded, structure), max_depth):
        raise JsonTooDeep(f"nested deeper than {max_depth} levels")


def _scanned(encoded: bytes) -> tuple[bytes, bool]:
    """`_structure(encoded)`, and whether `encoded` holds a run of digits as long as
    `_LONG_DIGITS`."""
    if b"\\" in encoded:
        scanned = encoded.translate(_SCAN)
        return _structure(scanned), _LONG_DIGITS in scanned
    # With no backslash nothing is masked, so the digits and the structure are all that
    # must be kept: one pass drops the rest, leaving a text a fraction as long to search.
    # Digits may then join across what was dropped (`"a1b2"`): a run found there is
    # looked for again in the full scan.
    kept = encoded.translate(_SCAN, _UNSCANNED)
    long_digits = _LONG_DIGITS in kept and _LONG_DIGITS in encoded.translate(_SCAN)
    return kept.translate(None, b"0"), long_digits


def valid_text(text: str) -> str:
    """`text` with any lone surrogate replaced by U+FFFD, so it encodes as UTF-8."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _escape(match: re.Match[str]) -> str:
    escape = match.group(0)
    if len(escape) == 6 and escape[1] == "u":
        return "\\ufffd"  # a lone surrogate: a pair is 12 characters long
    return escape


def loads(data: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value in `data` (text, or UTF-8/16/32 bytes); JsonError when it is not usable."""
    if isinstance(data, bytes | bytearray):
        try:
            text = bytes(data).decode(json.detect_encoding(data))
        except UnicodeDecodeError:
            raise JsonError("not UTF-8 text") from None
    else:
        text = data
    # Encoded once for the scans below (bytes are searched faster than text). Mending
    # surrogates below only ever shortens a run of digits, so the digits are counted here.
    encoded = text.encode("utf-8", "surrogatepass")
    structure, long_digits = _scanned(encoded)
    _check_text_nesting(text, encoded, max_depth, structure)
    text = valid_text(text)
    if b"\\" in encoded and _SURROGATE_ESCAPE.search(text) is not None:
        text = _ESCAPE.sub(_escape, text)
    if not long_digits:
        # orjson reads what is strictly JSON exactly as the standard decoder does, and
        # faster; it refuses the rest (NaN, a number beyond a double, a control character
        # in a string, ...), which the standard decoder then takes or refuses, naming the
        # problem as before. It would read an integer beyond 64 bits as a float: such a
        # text never comes here.
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise JsonError(f"line {error.lineno}, column {error.colno}: {error.msg}") from None
    except ValueError:  # the only other: an integer beyond sys.get_int_max_str_digits()
        raise JsonError("a number has too many digits") from None
    except RecursionError:  # the nesting fits the limit but not the stack left to this call
        raise JsonTooDeep("nested too deeply for the interpreter's recursion limit") from None
