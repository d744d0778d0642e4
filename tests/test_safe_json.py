"""oracle.safe_json: the one decoder of outside JSON."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from oracle import safe_json
from oracle.errors import JsonError, JsonTooDeep
from oracle.safe_json import MAX_DEPTH, loads, nesting_depth, valid_text


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=40,
)


@given(json_values)
def test_depth_is_measured_exactly_and_values_come_back(value: Any) -> None:
    text = json.dumps(value)
    assert nesting_depth(text) == depth_of(value)
    assert loads(text) == value
    assert loads(text.encode()) == value


@given(st.text(alphabet='[]{}"\\ ,:1', max_size=60))
def test_any_text_the_decoder_accepts_is_measured_exactly(text: str) -> None:
    try:
        value = json.loads(text)
    except ValueError:
        return
    assert nesting_depth(text) == depth_of(value)
    assert loads(text, max_depth=depth_of(value)) == value


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ('[[["[[[[", {"a": [1]}]]]', 5),  # brackets in strings do not count
        ('"\\\\"[[[', 3),  # an escaped backslash ends with the string
        ('"\\"[[[[', 0),  # an escaped quote does not end it
        ('"unterminated [[[', 0),
        ("[]]]][[[", 1),
    ],
)
def test_nesting_depth(text: str, depth: int) -> None:
    assert nesting_depth(text) == depth


def test_deep_nesting_is_refused_before_decoding() -> None:
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for deep in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 100_000, '{"a":' * 200):
        with pytest.raises(JsonTooDeep, match=r"^not usable JSON \(nested deeper than 100 levels"):
            loads(deep)
    with pytest.raises(JsonTooDeep):
        loads(("[" * 200).encode("utf-16"))  # the bytes as json.loads would read them
    assert loads('["' + "[" * 1000 + '"]') == ["[" * 1000]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "not usable JSON (line 1, column 2: Expecting property name"),
        ("", "not usable JSON (line 1, column 1: Expecting value)"),
        ("1" * 5000, "not usable JSON (a number has too many digits)"),
        (b"\xff\xfe\xfa", "not usable JSON (not UTF-8 text)"),
    ],
)
def test_every_failure_is_a_json_error(data: str | bytes, message: str) -> None:
    with pytest.raises(JsonError) as caught:
        loads(data)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, ValueError)


def test_lone_surrogates_become_replacement_characters() -> None:
    decoded = loads('["\\ud800", "\\udc00x", "\\ud83d\\ude00", "\\\\ud800", "\ud800"]')
    assert decoded == ["\ufffd", "\ufffdx", "\U0001f600", "\\ud800", "\ufffd"]
    for text in decoded:
        text.encode("utf-8")
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("plain") == "plain"


def test_time_is_linear_in_the_input() -> None:
    hostile = [
        "[" * 2_500_000 + "]" * 2_500_000,
        "[]" * 2_500_000,
        "[{" * 2_500_000,
        '"' + '\\"' * 2_500_000,
    ]
    for text in hostile:
        started = time.perf_counter()
        with contextlib.suppress(JsonError):
            loads(text)
        assert time.perf_counter() - started < 5.0  # 5 MB each: well under a second here


def test_importing_the_chain_stack_keeps_the_recursion_limit() -> None:
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; before = sys.getrecursionlimit(); import oracle.cli, web3, eth_account;"
            " import eth_keyfile; print(before, sys.getrecursionlimit())",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    before, after = child.stdout.split()
    assert before == after


@given(st.text(alphabet='[]{}"\\ ,:1aé\U0001f600\ud800', max_size=80))
@example('["a", "[", "\\"", "]"]')
@example('[""]]')
def test_the_quick_measure_reads_strings_as_the_regular_expression_does(text: str) -> None:
    """Where the byte-level measure answers (no backslash outside a string), it is the
    regular expression's; the decoder's own reading is checked above."""
    quick = safe_json._quick_steps(text)
    if quick is not None:
        assert quick == safe_json._steps(text)
    # As `loads` measures it: from the one scan that also marks the digits.
    encoded = text.encode("utf-8", "surrogatepass")
    structure, _ = safe_json._scanned(encoded)
    assert structure == safe_json._structure(encoded.translate(safe_json._SCAN))
    assert safe_json._quick_steps(text, structure=structure) == quick


@given(st.text(alphabet='0123456789a"\\[ .-', max_size=80))
@example("1" * 19)
@example('"a' + "1" * 10 + "a" + "1" * 9 + '"')  # joined only once the letter is dropped
@example("1" * 10 + "\\" + "1" * 9)
def test_the_scan_finds_a_long_run_of_digits_exactly_where_there_is_one(text: str) -> None:
    encoded = text.encode()
    _, long_digits = safe_json._scanned(encoded)
    assert long_digits == (re.search("[0-9]{19}", text) is not None)


@pytest.mark.parametrize(
    "text",
    [
        "[18446744073709551616]",  # beyond 64 bits: orjson would read a float
        "[-9223372036854775809]",
        "[1e400]",  # beyond a double: the standard decoder's infinity
        "[NaN, Infinity]",
        '{"a": 1, "a": 2}',
        '["\\ud83d\\ude00", "\\ud800", 0.1e-400, -0]',
        "[0.30000000000000004, 5e-324, 1.7976931348623157e308]",
    ],
)
def test_values_are_those_of_the_standard_decoder(text: str) -> None:
    # repr tells an int from a float, and -0.0 from 0.0
    assert repr(loads(text)) == repr(json.loads(text.replace("\\ud800", "\\ufffd")))


@given(json_values)
def test_the_fast_decoder_returns_the_standard_decoders_values(value: Any) -> None:
    text = json.dumps(value)
    assert repr(loads(text)) == repr(json.loads(text))


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([1, 255]), max_size=300).map(bytes), st.integers(0, 40))
@example(bytes([1] * 30 + [255] * 30), 29)
@example(bytes([1, 255, 255, 1, 1, 1]), 1)
def test_the_depth_bound_decides_as_the_full_count(steps: bytes, max_depth: int) -> None:
    """Peeling innermost pairs bounds the depth from above; whatever it cannot clear is
    counted in full, so the answer is always the full count's."""
    full = safe_json._depth(steps) <= max_depth
    assert safe_json._nesting_within(steps, max_depth) == full
