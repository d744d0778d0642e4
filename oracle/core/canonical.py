"""RFC 8785 (JSON Canonicalization Scheme) bytes, fast: orjson's output, mended where it
differs, and the reference implementation (the `rfc8785` package) wherever it might.

orjson, asked to sort keys and to refuse integers beyond +-(2**53 - 1), already writes
what RFC 8785 asks for, except:

- integral floats: orjson writes `1.0`, `-0.0` and `1e+16`, ECMAScript `1`, `0` and
  `10000000000000000`. They are found in the output (a number token ending in `.0`, or
  with an exponent, outside every string) and rewritten as ECMAScript's
  Number.prototype.toString writes them (`es_number`);
- key order: orjson sorts by code points, RFC 8785 by UTF-16 code units. The two differ
  only for names with characters beyond U+FFFF, so a document whose output has any such
  character anywhere and one in a key is written by the reference encoder;
- whatever orjson refuses (a lone surrogate, an integer beyond 2**53 - 1, a non-string key,
  a type that is not JSON) is handed to the reference encoder, whose result or refusal it
  is. NaN and infinities (which orjson would write as `null`) must be refused by the
  caller before: `canonical_bytes` takes values already checked (`oracle.core.proof`
  checks every value it hashes).

A large document may be written part by part (`object_bytes`): a part holding a float
orjson writes otherwise written apart (`fragment`; `named_fragment` mends by value, where
the names its floats are under are known), the others as they are (`written_alike`).

`tests/core/test_canonical.py` holds the result equal to the reference byte for byte on
arbitrary JSON values (astral-plane strings and keys, -0.0, huge and tiny floats,
integers up to 2**53 - 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping
from functools import lru_cache
from typing import Any

import orjson
import rfc8785

_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_STRICT_INTEGER
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# Where a number orjson writes otherwise than ECMAScript may end: integral (`12.0`), or with
# an exponent (`1e+16`; orjson always signs it). Each pattern starts with a literal, so the
# search skips through the output fast; the token itself is then read backwards.
_ENDINGS = (
    re.compile(rb"\.0[,\]}]"),
    re.compile(rb"e\+[0-9]+[,\]}]"),
    re.compile(rb"e-[0-9]+[,\]}]"),
)
# A number token that ends where the search stops; in compact output a value follows `:`, `,`
# or `[`. No number orjson writes is longer than 24 bytes.
_TOKEN = re.compile(rb"[:,\[](-?[0-9]+(?:\.[0-9]+)?(?:e[-+][0-9]+)?)\Z")
_LONGEST_TOKEN = 32
# The lead byte of a UTF-8 sequence beyond U+FFFF.
_ASTRAL_BYTES = re.compile(rb"[\xf0-\xf4]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def es_number(value: float) -> str:
    """`value` (finite) as ECMAScript's Number.prototype.toString writes it, which is
    RFC 8785's number form: shortest round-trip digits, `0` for -0, plain notation from
    1e-7 (exclusive) to 1e21 (exclusive), otherwise `1e+21`, `1.5e-7`."""
    if value == 0:
        return "0"
    if value < 0:
        return "-" + es_number(-value)
    mantissa, _, exponent = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # value = 0.<digits> x 10**point, as ECMAScript's algorithm reads it
    point = len(digits) + (int(exponent) if exponent else 0) - len(fraction)
    digits = digits.rstrip("0")
    if len(digits) <= point <= 21:
        return digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    power = point - 1
    sign = "+" if power >= 0 else "-"
    head = digits[0] if len(digits) == 1 else f"{digits[0]}.{digits[1:]}"
    return f"{head}e{sign}{abs(power)}"


@lru_cache(maxsize=1024)
def _es_token(token: bytes) -> bytes:
    """A number orjson wrote, as ECMAScript writes it. The same few (`1.0`, `0.0`) recur
    in every proof: each is worked out once."""
    return es_number(float(token)).encode()


def _astral_key(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(_ASTRAL.search(key) for key in item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def _mend(output: bytes) -> bytes:
    """orjson's `output` with its integral and exponent numbers written as ECMAScript does."""
    ends = sorted({m.end() - 1 for pattern in _ENDINGS for m in pattern.finditer(output)})
    spans = []
    for end in ends:
        token = _TOKEN.search(output, max(0, end - _LONGEST_TOKEN), end)
        if token is not None:
            spans.append(token.span(1))
    if not spans:
        return output
    # Escaped backslashes and quotes masked (same length), so each remaining `"` opens or
    # closes a string: an even count before a token puts it outside every string.
    # (With no backslash before the last token, there is nothing to mask.)
    last = spans[-1][0]
    masked = output
    if output.find(b"\\", 0, last) != -1:
        masked = output[:last].replace(b"\\\\", b"xx").replace(b'\\"', b"xx")
    pieces, copied, scanned, quotes = [], 0, 0, 0
    for start, end in spans:
        quotes += masked.count(b'"', scanned, start)
        scanned = start
        if quotes % 2:
            continue  # inside a string
        pieces += [output[copied:start], _es_token(output[start:end])]
        copied = end
    pieces.append(output[copied:])
    return b"".join(pieces)


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 bytes of `value` (with no NaN or infinity in it; see the module's
    docstring); `rfc8785.CanonicalizationError` when it has none."""
    if type(value) is float:
        return es_number(value).encode() if math.isfinite(value) else rfc8785.dumps(value)
    try:
        output = orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: refused, or a type it does not write
        return rfc8785.dumps(value)
    if not output.isascii() and _ASTRAL_BYTES.search(output) is not None and _astral_key(value):
        return rfc8785.dumps(value)
    return _mend(output)


# orjson writes a float in plain notation from 1e-5 (inclusive) to 1e16 (exclusive), and
# then one that is not an integer as ECMAScript does (`tests/core/test_canonical.py`).
_PLAIN_FROM, _PLAIN_TO = 1e-5, 1e16


def written_alike(floats: Iterable[float]) -> bool:
    """Whether orjson writes each of `floats` (finite) as ECMAScript does: none is integral
    (`1.0`) or written with an exponent (`1e-7`). A value whose floats all are, and whose
    object keys are all below U+10000, orjson writes as RFC 8785 does."""
    for number in floats:
        if type(number) is float and (
            number.is_integer() or not _PLAIN_FROM <= abs(number) < _PLAIN_TO
        ):
            written = orjson.dumps(number)
            if written.endswith(b".0") or b"e" in written:
                return False
    return True


def fragment(value: Any) -> orjson.Fragment:
    """`canonical_bytes(value)`, for `object_bytes` to write as they are."""
    return orjson.Fragment(canonical_bytes(value))


def named_fragment(value: Any, numbers: Mapping[str, Collection[float]]) -> orjson.Fragment:
    """`fragment(value)`, for a `value` (a proof's records, which may be many) whose every
    float is finite and the value of an object member named in `numbers`, which lists them
    under that name (a zero standing for both signs).

    Its numbers are mended by value rather than searched for: each distinct float orjson
    writes otherwise than ECMAScript (`1.0`, `1e-7`) is replaced where it follows its name
    (a name in quotes then a colon is never inside a string, whose quotes are escaped).
    Whatever this cannot hold as it is (an astral character, a value orjson refuses, ...)
    is written by `canonical_bytes`."""
    try:
        part = orjson.dumps(value, option=_OPTIONS)
    except TypeError:
        return fragment(value)
    if not part.isascii() and _ASTRAL_BYTES.search(part) is not None:
        return fragment(value)
    for name, held in numbers.items():
        if written_alike(held):  # most names: nothing to mend
            continue
        unlike = {number for number in held if not written_alike((number,))}
        forms = {orjson.dumps(number) for number in unlike}
        if 0.0 in unlike:  # a zero stands for 0.0 and -0.0 alike
            forms |= {b"0.0", b"-0.0"}
        named = orjson.dumps(name) + b":"
        for written in forms:
            wanted = _es_token(written)
            for end in (b",", b"}"):
                part = part.replace(named + written + end, named + wanted + end)
    return orjson.Fragment(part)


def object_bytes(members: dict[str, Any]) -> bytes:
    """The RFC 8785 bytes of an object (`canonical_bytes`) whose keys are all below U+10000
    and whose values are each a fragment (`fragment`, `named_fragment`: written as they
    are) or a value orjson writes as RFC 8785 does (its floats `written_alike`, its keys
    below U+10000); TypeError for what orjson refuses (an integer beyond +-(2**53 - 1))."""
    return orjson.dumps(members, option=_OPTIONS)
