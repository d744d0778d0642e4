"""The fast RFC 8785 encoder (`oracle.core.canonical`) writes exactly the reference's bytes
(the `rfc8785` package), and refuses what the reference refuses."""

from __future__ import annotations

import math
import struct
from typing import Any

import orjson
import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oracle.core.canonical import (
    canonical_bytes,
    es_number,
    fragment,
    named_fragment,
    object_bytes,
    written_alike,
)

MAX_SAFE = 2**53 - 1

# Text from every plane, astral included, the characters JSON escapes, and pieces that look
# like the numbers the encoder mends.
pieces = st.one_of(
    st.characters(blacklist_categories=("Cs",)),
    st.sampled_from(['"', "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f"]),
    st.sampled_from(["\u2028", "\ue000", "\uffff", "\U00010000", "\U0001f600", "/"]),
    st.sampled_from([":1.0,", ",2.0]", "[3e+16}", '\\":4.0,', ":-0.0}"]),
)
texts = st.lists(pieces, max_size=8).map("".join)
finite_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e16, 1e20, 1e21, 1e-6, 1e-7, 5e-324, 2.0**53]),
    st.integers(-(2**60), 2**60).map(float),
    st.builds(lambda m, e: m * 10.0**e, st.integers(1, 999), st.integers(-10, 25)),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-MAX_SAFE, MAX_SAFE), finite_floats, texts
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(texts, children, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=600, deadline=None)
@given(values)
@example({"\U0001f600": 1, "\uffff": 2, "\ue000": 3})
@example({"a": [1.0, -0.0, 1e16, 1e21, 1.5e-7, 2.0**60], "b": 'x\\":1.0,'})
@example(["\\", 1.0, '"', 2.0, '\\"', 3.0])
def test_equals_the_reference(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=3000, deadline=None)
@given(finite_floats)
def test_numbers_are_written_as_ecmascript_writes_them(number: float) -> None:
    assert es_number(number).encode() == rfc8785.dumps(number)
    assert float(es_number(number)) == number


@given(st.integers(0, 2**64 - 1))
def test_every_bit_pattern_of_a_double(bits: int) -> None:
    number = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if math.isfinite(number):
        assert canonical_bytes([number]) == rfc8785.dumps([number])


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (0.1 + 0.2, "0.30000000000000004"),
        (2.0**60, "1152921504606847000"),
        (-1.5e-300, "-1.5e-300"),
    ],
)
def test_known_forms(number: float, text: str) -> None:
    assert canonical_bytes({"n": number}) == b'{"n":' + text.encode() + b"}"


@pytest.mark.parametrize(
    "value",
    [
        {"x": 2**53},  # beyond what a double holds exactly
        ["\ud800"],  # a lone surrogate
        {"\udfff": 1},
        {1: "key not a string"},
        [float("nan")],
        float("inf"),
        [object()],
    ],
)
def test_refuses_what_the_reference_refuses(value: Any) -> None:
    refusals = (ValueError, TypeError, AttributeError)  # as the reference raises them
    with pytest.raises(refusals):
        rfc8785.dumps(value)
    if isinstance(value, list) and isinstance(value[0], float):
        return  # the caller refuses NaN first (oracle.core.proof): orjson writes null
    with pytest.raises(refusals):
        canonical_bytes(value)


# Records as a proof's merged sources are: scores (any finite float), text, null, lists of text;
# and the rest of a document around them (which may hold the placeholder's own text).
records = st.lists(
    st.fixed_dictionaries(
        {
            "url": texts,
            "title": texts,
            "credibility_score": finite_floats,
            "relevance_score": finite_floats,
            "published_at": st.none() | texts,
            "cited_by": st.lists(texts, max_size=3),
        }
    ),
    max_size=6,
)
# The rest of a document around them: members written apart (`fragment`) or as they are,
# when orjson writes them as RFC 8785 does (`written_alike`: one such float, text, lists
# and objects of them), under keys below U+10000 (as `object_bytes` takes them).
keys = texts.filter(lambda key: max(key, default="a") < "\U00010000")
alike = st.recursive(
    st.one_of(st.none(), texts, st.integers(-MAX_SAFE, MAX_SAFE), finite_floats),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(keys, children, max_size=3)
    ),
    max_leaves=8,
)
surroundings = st.dictionaries(keys | st.just("sources"), values, max_size=5)
plain = st.dictionaries(keys, alike, max_size=3)


def _floats(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [number for item in value for number in _floats(item)]
    return []


@settings(max_examples=600, deadline=None)
@given(surroundings, plain, records)
@example({}, {}, [{"credibility_score": 0.0, "relevance_score": -0.0}])
@example({}, {}, [{"credibility_score": -0.0, "relevance_score": 1.0}, {"credibility_score": 1e-7}])
@example({"\U0001f600": 1}, {}, [{"title": "\U0001f601", "credibility_score": 0.5}])
@example({}, {}, [{"title": '","credibility_score":1.0,"', "credibility_score": 2.0}])
@example({}, {"a": [0.5, {"b": 1e-5}]}, [])
def test_parts_written_apart_are_the_whole_documents_bytes(
    surrounding: dict[str, Any], as_they_are: dict[str, Any], part: list[dict[str, Any]]
) -> None:
    """An object written part by part (records as `named_fragment` writes them, other
    members as `fragment` writes them or, floats written alike, as they are) has the bytes
    of the whole document written at once."""
    numbers = ("credibility_score", "relevance_score")
    part = [dict.fromkeys(numbers, 0.5) | record for record in part]
    whole = {**surrounding, **as_they_are, "sources": part}
    floats = {name: {record[name] for record in part} for name in numbers}
    parts = {key: fragment(value) for key, value in surrounding.items()}
    parts |= {
        key: value if written_alike(_floats(value)) else fragment(value)
        for key, value in as_they_are.items()
    }
    parts["sources"] = named_fragment(part, floats)
    assert object_bytes(parts) == rfc8785.dumps(whole)


@settings(max_examples=3000, deadline=None)
@given(finite_floats)
@example(1e-5)
@example(9.999999999999999e-6)
@example(1e16)
@example(9999999999999998.0)
@example(1e16 - 1.5)
def test_floats_written_alike_are_those_orjson_writes_neither_integral_nor_with_an_exponent(
    number: float,
) -> None:
    """The numbers `_mend` finds in orjson's output are those not written alike; the
    others orjson writes as ECMAScript does."""
    written = orjson.dumps(number)
    assert written_alike([number]) == (not written.endswith(b".0") and b"e" not in written)
    if written_alike([number]):
        assert written == es_number(number).encode()


@given(st.lists(finite_floats, min_size=3, max_size=3), texts)
@example([1.0, 0.0, -0.0], "")
@example([1e-7, 1e21, 2.0], '"jaccard":1.0,')
def test_named_floats_are_mended_at_any_depth(numbers: list[float], text: str) -> None:
    average, jaccard, other = numbers
    value = {
        "average": average,
        "band": text,
        "pairs": [{"agents": [text, "b"], "jaccard": jaccard}, {"jaccard": other}],
    }
    written = named_fragment(value, {"average": [average], "jaccard": [jaccard, other]})
    assert object_bytes({"overlap": written}) == rfc8785.dumps({"overlap": value})
