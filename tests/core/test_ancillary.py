"""UMA/Polymarket ancillary data read as a question: the layouts written on-chain, and
hostile bytes (only `AncillaryDataError`, naming the part, never a crash)."""

from __future__ import annotations

import contextlib
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.core.ancillary import (
    ANCILLARY_BYTES_LIMIT,
    NO,
    PRICE_SCALE,
    TOO_EARLY,
    TOO_EARLY_PRICE,
    UNKNOWN,
    YES,
    YES_OR_NO_DEFAULTS,
    AncillaryQuestion,
    parse_ancillary,
)
from oracle.errors import AncillaryDataError, InputError

INITIALIZER = "91430cad2d3975766499717fa0d66a78d814e5c5"
RES_DATA = (
    "res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50."
)
BULLETIN = (
    "Updates made by the question creator via the bulletin board at "
    "0x65070BE91477460D8A7AeEb94ef92fe056C2f2A7 as described by "
    "https://polygonscan.com/tx/0xa14f01b115c4913624fc3f508f960f4dea252758e73c28f5f07f8e19d7bca066 "
    "should be considered."
)
HALF = PRICE_SCALE // 2


def polymarket(title: str = "Will it rain in Paris on 1 June?", description: str = "") -> bytes:
    """Ancillary data as Polymarket's adapter leaves it on-chain."""
    description = description or (
        'This market will resolve to "Yes" if it rains in Paris on 1 June 2026. Otherwise "No".'
    )
    text = f"q: title: {title}, description: {description} {RES_DATA} {BULLETIN}"
    return f"{text},initializer:{INITIALIZER}".encode()


def prices(question: AncillaryQuestion) -> dict[str, tuple[str | None, int]]:
    return {o.key: (o.meaning, o.price) for o in question.options}


def test_reads_polymarket_ancillary_data_as_written() -> None:
    question = parse_ancillary(polymarket())
    assert question.title == "Will it rain in Paris on 1 June?"
    assert question.description.startswith('This market will resolve to "Yes"')
    assert question.description.endswith('Otherwise "No".')
    assert question.notes == BULLETIN
    assert question.res_data is True
    assert prices(question) == {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (UNKNOWN, HALF)}
    assert [o.label for o in question.options] == ["No", "Yes", "unknown/50-50"]
    assert question.initializer == "0x" + INITIALIZER
    assert question.appended == (("initializer", INITIALIZER),)
    assert question.price_for("YES") == PRICE_SCALE
    assert question.price_for("NO") == 0
    assert question.price_for("INVALID") == HALF  # unknown/50-50
    assert question.text.startswith("Will it rain in Paris on 1 June?\n\nThis market")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.5. Where p2 "
            "corresponds to Yes, p1 to a No, p3 to unknown",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (UNKNOWN, HALF)},
            id="p2 first, 'a No'",
        ),
        pytest.param(
            f"q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.5, p4: "
            f"{TOO_EARLY_PRICE}. Where p1 corresponds to No, p2 to a Yes, p3 to unknown, and p4 "
            "to an early request.",
            {
                "p1": (NO, 0),
                "p2": (YES, PRICE_SCALE),
                "p3": (UNKNOWN, HALF),
                "p4": (TOO_EARLY, TOO_EARLY_PRICE),
            },
            id="with p4 too early",
        ),
        pytest.param(
            "q: title: T?, description: D. res_data: p1: 0, p2: 1. Where p1 corresponds to No, "
            "p2 to Yes.",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE)},
            id="neg risk: no p3",
        ),
        pytest.param(
            "q: title: Bitcoin Up or Down?, description: D. res_data: p1: 0, p2: 1, p3: 0.5. "
            "Where p1 corresponds to Down, p2 to Up, p3 to unknown/50-50.",
            {"p1": (None, 0), "p2": (None, PRICE_SCALE), "p3": (UNKNOWN, HALF)},
            id="labels of its own",
        ),
        pytest.param(
            "q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.5",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (UNKNOWN, HALF)},
            id="standard prices, no sentence",
        ),
        pytest.param(
            "q: title: T?, description: D",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (UNKNOWN, HALF)},
            id="no res_data: YES_OR_NO_QUERY defaults",
        ),
        pytest.param(
            "q: Will Hull City AFC win on 2026-02-14?\nres_data: p1: 0, p2: 1, p3: 0.5. Where p1 "
            "corresponds to No, p2 to Yes, p3 to Unknown/50-50.\nMatch: Hull City AFC vs Preston.",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (UNKNOWN, HALF)},
            id="plain q, line breaks",
        ),
        pytest.param(
            "q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.25. Where p1 corresponds "
            "to No, p2 to Yes, p3 to a quarter.",
            {"p1": (NO, 0), "p2": (YES, PRICE_SCALE), "p3": (None, PRICE_SCALE // 4)},
            id="other decimals",
        ),
    ],
)
def test_layouts(text: str, expected: dict[str, tuple[str | None, int]]) -> None:
    assert prices(parse_ancillary(text.encode())) == expected


def test_without_res_data_the_identifier_defaults_apply() -> None:
    question = parse_ancillary(b"q: title: Will it snow?, description: In Oslo.")
    assert question.res_data is False
    assert question.options == YES_OR_NO_DEFAULTS
    assert question.title == "Will it snow?"
    assert question.description == "In Oslo."
    assert question.initializer is None
    assert [o.price for o in YES_OR_NO_DEFAULTS] == [0, 10**18, 5 * 10**17]


def test_appended_fields_in_order() -> None:
    tail = f",initializer:{INITIALIZER},ooRequester:{'ab' * 20},childChainId:137"
    question = parse_ancillary(b"q: title: T?, description: D" + tail.encode())
    assert question.appended == (
        ("initializer", INITIALIZER),
        ("ooRequester", "ab" * 20),
        ("childChainId", "137"),
    )
    assert question.description == "D"


def test_too_early_is_never_chosen_unless_allowed() -> None:
    question = parse_ancillary(
        f"q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.5, p4: {TOO_EARLY_PRICE}. "
        "Where p1 corresponds to No, p2 to Yes, p3 to unknown, and p4 to an early request.".encode()
    )
    with pytest.raises(AncillaryDataError, match="too-early price is never proposed"):
        question.price_for("TOO_EARLY")
    with pytest.raises(AncillaryDataError, match="too-early"):
        question.price_for("an early request")  # by its label: still refused
    assert question.price_for("TOO_EARLY", allow_too_early=True) == TOO_EARLY_PRICE
    # Offered or not, the constant is UMA's minimum int256.
    plain = parse_ancillary(polymarket())
    assert plain.price_for("TOO_EARLY", allow_too_early=True) == TOO_EARLY_PRICE == -(2**255)


def test_an_outcome_without_a_price_is_refused() -> None:
    question = parse_ancillary(
        b"q: title: T?, description: D. res_data: p1: 0, p2: 1. Where p1 corresponds to No, "
        b"p2 to Yes."
    )
    with pytest.raises(AncillaryDataError, match=r"outcome INVALID: no price for it \(p1 No"):
        question.price_for("INVALID")
    assert question.price_for("yes") == PRICE_SCALE


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "input: empty"),
        (b"q: title: caf\xc3", r"input: not UTF-8 \(invalid byte at offset 13\)"),
        (b"\xff\xfe", r"not UTF-8 \(invalid byte at offset 0\)"),
        (b"q: title: a\x00b", r"control character U\+0000 at offset 11"),
        (b"title: T, description: D", "q: missing"),
        (b"q: title: , description: D", "title: empty"),
        (b"q:", "title: empty"),
        (
            b"q: title: T, description: D res_data: p1: 0 res_data: p1: 1",
            r"res_data: appears twice \(at offsets",
        ),
        (b"q: title: T, description: a, description: b", "description: appears twice"),
        (b"q: title: T title: U, description: b", "title: appears twice"),
        (
            b"q: title: T, description: D res_data: p1: 0, p1: 1. Where p1 corresponds to No.",
            "res_data p1: appears twice",
        ),
        (b"q: title: T, description: D res_data: p1: zero.", "res_data p1: expected a number"),
        (b"q: title: T, description: D res_data: one: 0.", r"res_data: expected `pN: <number>`"),
        (b"q: title: T, description: D res_data: p1: 0; p2: 1.", "expected `, ` or `.` after p1"),
        (
            b"q: title: T, description: D res_data: p1: 0.0000000000000000001.",
            "more than 18 decimals",
        ),
        (b"q: title: T, description: D res_data: p1: 1" + b"0" * 80 + b".", "outside int256"),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1. Where p1 corresponds to No, "
            b"p3 to Yes.",
            "res_data p3: labelled but has no price",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1. Where p1 corresponds to No, "
            b"p1 to Yes.",
            "res_data p1: labelled twice",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1. Where p1 corresponds to Yes, "
            b"p2 to Yes.",
            "res_data p2: means YES, as p1 does",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 0. Where p1 corresponds to No, "
            b"p2 to Maybe.",
            "two outcomes share a price",
        ),
        (
            b"q: title: T, description: D res_data: p1: 1, p2: 0.",
            "no `Where p1 corresponds to ...` sentence",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1, p3: 0.7. Where p1 corresponds "
            b"to No, p2 to Yes.",
            "res_data p3: has a price but no label",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1. Where p1 is No.",
            r"expected `pN corresponds to <label>`",
        ),
        (
            b"q: title: T, description: D res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds "
            b"to No, p2 to Yes, p3 to too early.",
            "labelled too early but its price is not UMA's",
        ),
        (b"q: title: T,initializer:xyz", "initializer: not a 40-digit hex address"),
        (b"q: title: T,childChainId:1x", "childChainId: not a decimal number"),
        (
            f"q: title: T,initializer:{INITIALIZER},initializer:{INITIALIZER}".encode(),
            "initializer: appears twice",
        ),
        (
            f"q: title: T,initializer:{INITIALIZER}, description: D".encode(),
            "initializer: not at the end",
        ),
        (
            f"q: title: T,initializer:{INITIALIZER} x,initializer:{INITIALIZER}".encode(),
            "initializer: appears twice",
        ),
        (b"q: " + b"a" * ANCILLARY_BYTES_LIMIT, f"more than the limit of {ANCILLARY_BYTES_LIMIT}"),
    ],
)
def test_malformed_data_is_refused_naming_the_part(data: bytes, message: str) -> None:
    with pytest.raises(AncillaryDataError, match=message) as raised:
        parse_ancillary(data)
    assert str(raised.value).startswith("ancillary data: ")
    assert isinstance(raised.value, InputError)


def test_not_bytes_is_refused() -> None:
    with pytest.raises(AncillaryDataError, match="expected bytes, got str"):
        parse_ancillary("q: title: T")  # type: ignore[arg-type]


def test_a_huge_input_is_refused_before_it_is_decoded() -> None:
    started = time.perf_counter()
    with pytest.raises(AncillaryDataError, match="more than the limit"):
        parse_ancillary(b"\xff" * 50_000_000)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    "body",
    [
        "q: title: " + ", p1 to " * 1000,
        "q: title: T res_data: p1: 0. Where p1 corresponds to " + ", p2 to" * 1000,
        "q: " + " " * 8000 + "x",
        "q: title: T res_data: " + "p1: 0, " * 1100,
        "q: title: T" + ",initializer:" * 500,
        "q: title: T res_data: p1: 0. Where p1 corresponds to x" + ", and p1 to " * 600,
    ],
)
def test_pathological_inputs_within_the_limit_cost_little(body: str) -> None:
    data = body.encode()[:ANCILLARY_BYTES_LIMIT]
    started = time.perf_counter()
    with contextlib.suppress(AncillaryDataError):
        parse_ancillary(data)
    assert time.perf_counter() - started < 0.5


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_crash_it(data: bytes) -> None:
    try:
        parse_ancillary(data)
    except AncillaryDataError as error:
        message = str(error)
    else:
        return
    assert message.startswith("ancillary data: ")


FRAGMENTS = st.sampled_from(
    [
        "q:",
        " title:",
        " T?",
        ", description:",
        " D.",
        " res_data:",
        " p1:",
        " p2:",
        " p3:",
        " p4:",
        " 0",
        " 1",
        " 0.5",
        f" {TOO_EARLY_PRICE}",
        ",",
        ".",
        " Where",
        " p1 corresponds to",
        " p2 to",
        ", and p3 to",
        " No",
        " Yes",
        " unknown/50-50",
        " an early request",
        f",initializer:{INITIALIZER}",
        ",ooRequester:",
        ",childChainId:137",
        "\n",
        "é",
        "\x00",
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(FRAGMENTS, max_size=30).map("".join))
def test_near_miss_texts_either_parse_or_name_the_part(text: str) -> None:
    try:
        question = parse_ancillary(text.encode())
    except AncillaryDataError as error:
        message = str(error)
    else:
        message = ""
    if message:
        assert message.startswith("ancillary data: ")
        return
    # What parses is consistent: distinct keys and prices, one option per meaning.
    assert question.title
    keys = [o.key for o in question.options]
    assert len(set(keys)) == len(keys)
    assert len({o.price for o in question.options}) == len(question.options)
    meanings = [o.meaning for o in question.options if o.meaning is not None]
    assert len(set(meanings)) == len(meanings)
    for option in question.options:
        if option.price == TOO_EARLY_PRICE:
            with pytest.raises(AncillaryDataError):
                question.price_for(option.label)
