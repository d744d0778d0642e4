"""The fast RFC 8785 encoder (`oracle.core.canonical`) writes exactly the reference's bytes
(the `rfc8785` package), and refuses what the reference refuses."""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oracle.core.canonical import canonical_bytes, es_number

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
