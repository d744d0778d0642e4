"""UMA/Polymarket ancillary data read as a question: the layouts written on-chain, and
hostile bytes (only `AncillaryDataError`, naming the part, never a crash)."""

from __future__ import annotations

import contextlib
import json
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
        ", p4 corresponds to",
        ", earlyExpiration:1",
        " St.",
        " Co.",
        " U.S.",
        ". ",
        '{"title": "T", "options": [["Yes", "1"]]}',
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


# -- labels that hold full stops, the early-expiration layout, UMIP-181's JSON layout -------

WHERE = "q: title: T?, description: D. res_data: p1: 0, p2: 1, p3: 0.5. Where "


def labels(text: str) -> dict[str, str]:
    return {o.key: o.label for o in parse_ancillary(text.encode()).options}


@pytest.mark.parametrize(
    ("sentence", "expected", "notes"),
    [
        pytest.param(
            "p1 corresponds to St. Louis Cardinals, p2 to Houston Astros, p3 to unknown/50-50. "
            + BULLETIN,
            {"p1": "St. Louis Cardinals", "p2": "Houston Astros", "p3": "unknown/50-50"},
            BULLETIN,
            id="St. in p1",
        ),
        pytest.param(
            "p1 corresponds to Iona, p2 to Mt. St. Mary's, p3 to unknown/50-50. " + BULLETIN,
            {"p1": "Iona", "p2": "Mt. St. Mary's", "p3": "unknown/50-50"},
            BULLETIN,
            id="Mt. St. in p2, not cut",
        ),
        pytest.param(
            "p1 corresponds to Ken Griffey Jr., p2 to U.S. Open champion, p3 to unknown/50-50.",
            {"p1": "Ken Griffey Jr.", "p2": "U.S. Open champion", "p3": "unknown/50-50"},
            "",
            id="Jr. and U.S. before the next label",
        ),
        pytest.param(
            'p1 corresponds to "Dr. Who", p2 to  Movistar , p3 to unknown/50-50.',
            {"p1": '"Dr. Who"', "p2": "Movistar", "p3": "unknown/50-50"},
            "",
            id="quotes, spaces",
        ),
        pytest.param(
            "p1 corresponds to Sa\u200bn Jos\u00e9, p2 to Ft. Wayne, p3 to unknown/50-50.\nMore.",
            {"p1": "San José", "p2": "Ft. Wayne", "p3": "unknown/50-50"},
            "More.",
            id="hidden character, line break",
        ),
    ],
)
def test_labels_with_abbreviations_and_punctuation(
    sentence: str, expected: dict[str, str], notes: str
) -> None:
    question = parse_ancillary((WHERE + sentence).encode())
    assert {o.key: o.label for o in question.options} == expected
    assert question.notes == notes


def test_a_last_label_with_an_abbreviation_is_read_when_it_cannot_end_the_sentence() -> None:
    text = "q: title: T?, description: D. res_data: p1: 0, p2: 1. Where p1 corresponds to "
    assert labels(text + "Iona, p2 to St. Louis. More.") == {"p1": "Iona", "p2": "St. Louis"}
    assert labels(text + "Team B, p2 to Team A.") == {"p1": "Team B", "p2": "Team A"}
    assert labels(text + "Iona, p2 to Ken Griffey Jr.") == {"p1": "Iona", "p2": "Ken Griffey Jr"}
    with pytest.raises(AncillaryDataError, match=r"p2: its label may end .* \(after `A.`\)"):
        parse_ancillary((text + "Team B, p2 to Team A. More.").encode())


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        pytest.param(
            "p1 corresponds to No, p2 to Acme Co. More text.",
            r"res_data p2: its label may end at offset \d+ \(after `Co.`\) or at offset \d+: "
            "ambiguous",
            id="Co. may end the sentence",
        ),
        pytest.param(
            "p1 corresponds to No. Then, p2 to Yes, p3 to unknown.",
            r"res_data p2: named at offset \d+, after the sentence naming the prices ended "
            r"\(at offset \d+, after `No`\): ambiguous",
            id="a key named after the sentence ended",
        ),
        pytest.param(
            "p1 corresponds to Na. Sa, p2 to Yes, p3 to unknown.",
            r"res_data p2: named at offset \d+, after the sentence",
            id="an abbreviation the reader does not know: refused, never cut",
        ),
    ],
)
def test_a_sentence_read_two_ways_is_refused(sentence: str, message: str) -> None:
    with pytest.raises(AncillaryDataError, match=message):
        parse_ancillary((WHERE + sentence).encode())


EARLY = (
    "q: title: Will the Lakers win?, description: D. res_data:p1: 0, p2: 1, p3: 0.5, "
    f"p4:{TOO_EARLY_PRICE}, earlyExpiration:1 Where p1 corresponds to No, p2 to Yes, p3 to "
    f"unknown/50-50, p4 corresponds to early request. ,initializer:{INITIALIZER}"
)


def test_the_early_expiration_layout() -> None:
    question = parse_ancillary(EARLY.encode())
    assert question.early_expiration is True
    assert prices(question) == {
        "p1": (NO, 0),
        "p2": (YES, PRICE_SCALE),
        "p3": (UNKNOWN, HALF),
        "p4": (TOO_EARLY, TOO_EARLY_PRICE),
    }
    assert question.options[3].label == "early request"
    assert question.notes == ""
    assert question.initializer == "0x" + INITIALIZER
    # The early request is no answer the agents give: its price is never proposed unasked.
    with pytest.raises(AncillaryDataError, match="too-early"):
        question.price_for("TOO_EARLY")
    assert question.price_for("TOO_EARLY", allow_too_early=True) == TOO_EARLY_PRICE
    assert parse_ancillary(polymarket()).early_expiration is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (EARLY.replace("earlyExpiration:1 Where", "earlyExpiration:2 Where"), "expected `pN"),
        (
            EARLY.replace("earlyExpiration:1", "earlyExpiration:1, earlyExpiration:1"),
            "res_data earlyExpiration: appears twice",
        ),
        (EARLY.replace("earlyExpiration:1 Where", "earlyExpiration:1 When"), "expected `, `"),
        (
            EARLY.replace(f"p4:{TOO_EARLY_PRICE}", "p4: 2"),
            "res_data p4: labelled too early but its price is not UMA's",
        ),
    ],
)
def test_early_expiration_layouts_it_cannot_read(text: str, message: str) -> None:
    with pytest.raises(AncillaryDataError, match=message):
        parse_ancillary(text.encode())


def test_the_json_layout() -> None:
    document = {
        "title": "NCAAB: Arizona Wildcats vs. Clemson Tigers",
        "description": "If the Arizona Wildcats win, “Arizona”.\nIf Clemson wins, “Clemson”.",
        "options": [["Arizona", "0"], ["Clemson", "1"], ["50-50", "500000000000000000"]],
    }
    data = json.dumps(document).encode() + f",initializer:{INITIALIZER}".encode()
    question = parse_ancillary(data)
    assert question.layout == "json"
    assert question.title == document["title"]
    assert question.description == document["description"]
    assert prices(question) == {"o1": (None, 0), "o2": (None, 1), "o3": (UNKNOWN, HALF)}
    assert question.price_for("Clemson") == 1  # the value as written: no 1e18 scale
    assert question.initializer == "0x" + INITIALIZER
    plain = parse_ancillary(b'{"title": "Will it snow?", "description": "In Oslo."}')
    assert [(o.meaning, o.price) for o in plain.options] == [(NO, 0), (YES, 1)]
    assert plain.res_data is False


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"title": "T", "title": "U"}', "json: key 'title' appears twice"),
        (b'{"title": "T", "rebate": 0}', "json: unknown key 'rebate'"),
        (b'{"description": "D"}', "title and description must be strings"),
        (b'{"title": " "}', "title: empty"),
        (b'{"title": "T", "options": [["Yes", "1e18"]]}', r"json options\[0\]: value '1e18'"),
        (b'{"title": "T", "options": [["Yes", 1]]}', r"json options\[0\]: expected a \[label"),
        (b'{"title": "T", "options": []}', "json options: expected a list of 1 to 16"),
        (b'{"title": "T", "options": [["Yes", "1"], ["Yes", "2"]]}', "means YES, as o1 does"),
        (b'{"title": "T", "options": [["A", "1"], ["B", "1"]]}', "two outcomes share a price"),
        (b'{"title": "T", "x": NaN}', "NaN is not a JSON number"),
        (b'{"title": "T"} trailing', "json: not JSON: Extra data at offset 15"),
        (b'{"title": ' + b"[" * 4000 + b"]" * 4000 + b"}", "json: nested too deeply"),
        (b'{"title": ["T"]}', "title and description must be strings"),
    ],
)
def test_json_layouts_it_cannot_read(data: bytes, message: str) -> None:
    with pytest.raises(AncillaryDataError, match=message):
        parse_ancillary(data)
