"""Reality.eth v3 questions, answers, bonds and histories (oracle.venues.reality.rules): the
templates as Reality.eth's tools fill them, hostile text (only `RealityQuestionError`,
naming the field), the answer encodings, the bond rule and the claim arguments."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from eth_utils.crypto import keccak
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.core.text import clean, clean_labels
from oracle.errors import InputError, RealityQuestionError
from oracle.venues.reality.rules import (
    DEFAULT_TEMPLATES,
    DELIMITER,
    INVALID,
    INVALID_ANSWER,
    MAX_OUTCOMES,
    NO,
    NULL_HASH,
    QUESTION_BYTES_LIMIT,
    TEMPLATES,
    TOO_EARLY,
    TOO_SOON_ANSWER,
    YES,
    HistoryEntry,
    Phase,
    QuestionKind,
    answer_hash,
    bond_accepts,
    claim_arguments,
    claim_payouts,
    commitment_id,
    content_hash,
    decode_answer,
    encode_answer,
    encode_question_text,
    history_hash,
    history_hashes,
    minimum_next_bond,
    parse_question,
    phase,
    position,
    question_id,
)

ALICE = "0x" + "a1" * 20
BOB = "0x" + "b2" * 20
CAROL = "0x" + "c3" * 20
ALL_TEMPLATES = frozenset(TEMPLATES)


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


# --- reading questions ----------------------------------------------------------------------


def test_reads_a_bool_question_as_omen_writes_it() -> None:
    text = 'Will \\"Team A\\" win the final on 1 June 2026?␟sports␟en_US'
    question = parse_question(0, text)
    assert question.kind == QuestionKind.BOOL
    assert question.title == 'Will "Team A" win the final on 1 June 2026?'
    assert (question.category, question.language) == ("sports", "en_US")
    assert question.outcomes == ()
    assert question.labels == ("Yes", "No")


def test_reads_single_and_multiple_select_outcomes() -> None:
    text = 'Who wins the 2026 World Cup?␟"Brazil","France","Côte d\'Ivoire","Other"␟sports␟en_US'
    single = parse_question(2, text)
    assert single.kind == QuestionKind.SINGLE_SELECT
    assert single.outcomes == ("Brazil", "France", "Côte d'Ivoire", "Other")
    multiple = parse_question(3, text)
    assert multiple.kind == QuestionKind.MULTIPLE_SELECT
    assert multiple.outcomes == single.outcomes


def test_escapes_in_the_title_are_read_as_json() -> None:
    text = encode_question_text(QuestionKind.BOOL, 'Line one\nsays "hi" \\ ☕ 𝔘', category="x")
    # The title is market text, NFKC-normalized: the mathematical letter reads U.
    assert parse_question(0, text).title == 'Line one\nsays "hi" \\ ☕ U'
    assert parse_question(0, text.encode("utf-8")).title == 'Line one\nsays "hi" \\ ☕ U'


def test_uint_and_datetime_only_when_enabled() -> None:
    text = "How many goals?␟sports␟en_US"
    with pytest.raises(RealityQuestionError, match=r"template: 1 \(uint\) is not enabled"):
        parse_question(1, text)
    with pytest.raises(RealityQuestionError, match=r"template: 4 \(datetime\) is not enabled"):
        parse_question(4, text)
    uint = parse_question(1, text, templates=ALL_TEMPLATES)
    assert (uint.kind, uint.decimals) == (QuestionKind.UINT, 18)
    assert parse_question(4, text, templates={4}).kind == QuestionKind.DATETIME
    assert {0, 2, 3} == DEFAULT_TEMPLATES


@pytest.mark.parametrize(
    ("template", "text", "message"),
    [
        (7, "a␟b␟c", r"template: 7 is not a built-in template"),
        (0, "Only a title", r"text: 1 fields separated by U\+241F, the bool template takes 3"),
        (
            2,
            "Title␟sports␟en",
            r"text: 3 fields .* single-select template takes 4 \(title, outcomes",
        ),
        (0, "a␟b␟c␟d", r"text: 4 fields"),
        (0, "␟sports␟en", r"title: empty"),
        (0, "   ␟sports␟en", r"title: empty"),
        (0, 'Say "hi"␟sports␟en', r"title: not valid once placed in its template"),
        (0, "Back\\slash␟sports␟en", r"title: not valid once placed"),
        (0, 'T␟spo"rts␟en', r"category: not valid once placed"),
        (2, 'T␟"a","b␟sports␟en', r"outcomes: not valid once placed"),
        (2, 'T␟"a"␟sports␟en', r"outcomes: 1 given, at least 2 needed"),
        (2, 'T␟"a","a"␟sports␟en', r"outcomes: label 1 repeats an earlier one"),
        (2, 'T␟"a",""␟sports␟en', r"outcomes: label 1: empty"),
        (2, 'T␟"a",2␟sports␟en', r"outcomes: label 1: expected a string, got int"),
        (2, 'T␟"a",["b"]␟sports␟en', r"outcomes: label 1: expected a string, got list"),
        (0, "Tab\\u0000␟sports␟en", r"title: control or formatting character U\+0000"),
        (0, "Evil \\u202e txet␟sports␟en", r"title: control or formatting character U\+202E"),
        (0, "Lone \\ud800␟sports␟en", r"title: holds a lone surrogate"),
        (0, "Raw\ttab is fine but raw\x01 is not␟s␟en", r"not valid once placed"),
        (0, 'T", "type": "uint␟sports␟en', r"type: appears twice"),
        (0, 'T", "x": "y␟sports␟en', r"does not fill the bool template's fields exactly"),
        (2, 'T␟"a","b"], "title": "Injected", "x": [␟sports␟en', r"title: appears twice"),
        (2, "T␟" + "[" * 5000 + "␟s␟en", r"reality question: (text|outcomes)"),
        (0, "T␟" + "c" * 300 + "␟en", r"category: longer than 256 characters"),
    ],
)
def test_hostile_text_is_refused_naming_the_field(template: int, text: str, message: str) -> None:
    with pytest.raises(RealityQuestionError, match=message):
        parse_question(template, text)


def test_hostile_bytes_are_refused() -> None:
    with pytest.raises(RealityQuestionError, match=r"text: not UTF-8 \(invalid byte at offset 2\)"):
        parse_question(0, b"Hi\xff\xfe\xe2\x90\x9fs\xe2\x90\x9fen")
    huge = ("x" * QUESTION_BYTES_LIMIT + "␟s␟en").encode()
    with pytest.raises(RealityQuestionError, match=r"text: \d+ bytes, more than the limit"):
        parse_question(0, huge)
    with pytest.raises(RealityQuestionError, match=r"text: more than the limit"):
        parse_question(0, "x" * QUESTION_BYTES_LIMIT + "␟s␟en")
    with pytest.raises(RealityQuestionError, match=r"text: expected bytes or str, got int"):
        parse_question(0, 5)  # type: ignore[arg-type]
    many = ",".join(f'"{i}"' for i in range(MAX_OUTCOMES + 1))
    with pytest.raises(RealityQuestionError, match=r"outcomes: 257 given, at most 256"):
        parse_question(2, f"T␟{many}␟s␟en")
    assert issubclass(RealityQuestionError, InputError)


def test_the_message_never_quotes_the_question() -> None:
    secret = "SECRET-TITLE-TEXT"
    with pytest.raises(RealityQuestionError) as raised:
        parse_question(0, f'{secret} "quoted"␟s␟en')
    assert secret not in str(raised.value)


@settings(max_examples=300, deadline=None)
@given(template=st.sampled_from(sorted(TEMPLATES)), text=st.text(max_size=300))
def test_any_text_parses_or_is_refused_cleanly(template: int, text: str) -> None:
    try:
        question = parse_question(template, text, templates=ALL_TEMPLATES)
    except RealityQuestionError:
        return
    assert question.title.strip()


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf"), blacklist_characters="␟"),
        min_size=1,
        max_size=80,
    ).filter(lambda title: clean(title).text.strip()),
    outcomes=st.lists(
        st.text(
            alphabet=st.characters(
                blacklist_categories=("Cc", "Cs", "Cf"), blacklist_characters="␟"
            ),
            min_size=1,
            max_size=20,
        ).filter(str.strip),
        min_size=2,
        max_size=8,
        unique=True,
    ),
)
def test_what_reality_tools_write_reads_back(title: str, outcomes: list[str]) -> None:
    for kind in (QuestionKind.SINGLE_SELECT, QuestionKind.MULTIPLE_SELECT):
        text = encode_question_text(kind, title, outcomes=outcomes, category="c", language="en")
        template = 2 if kind == QuestionKind.SINGLE_SELECT else 3
        question = parse_question(template, text)
        # Read back as written, cleaned as all market text is (NFKC, no invisible ones).
        assert (question.title, question.outcomes) == (
            clean(title).text,
            clean_labels(outcomes)[0],
        )
    bool_text = encode_question_text(QuestionKind.BOOL, title)
    assert parse_question(0, bool_text).title == clean(title).text


def test_a_field_holding_the_separator_is_refused_both_ways() -> None:
    # Written, it would read back as other fields; read, it is refused, never misread.
    with pytest.raises(ValueError, match=r"outcomes\[1\]: holds the field separator"):
        encode_question_text(QuestionKind.SINGLE_SELECT, "T", outcomes=["a", "b␟c"])
    with pytest.raises(ValueError, match="title: holds the field separator"):
        encode_question_text(QuestionKind.BOOL, "a␟b")
    smuggled = DELIMITER.join(["0", '"0", "', '"', "c", "en"])
    with pytest.raises(RealityQuestionError, match="5 fields separated by U\\+241F"):
        parse_question(2, smuggled)


def test_the_templates_fill_to_the_json_the_dapp_reads() -> None:
    text = encode_question_text(QuestionKind.SINGLE_SELECT, "T", outcomes=["a", "b"], category="c")
    values = text.split(DELIMITER)
    filled = TEMPLATES[2] % tuple(values)
    assert json.loads(filled) == {
        "title": "T",
        "type": "single-select",
        "outcomes": ["a", "b"],
        "category": "c",
        "lang": "en_US",
    }


# --- answers --------------------------------------------------------------------------------


def test_bool_answers() -> None:
    question = parse_question(0, "T␟c␟en")
    assert encode_answer(question, "YES") == word(1)
    assert encode_answer(question, "no") == word(0)
    assert encode_answer(question, INVALID) == INVALID_ANSWER == b"\xff" * 32
    with pytest.raises(RealityQuestionError, match="answered-too-soon is never given"):
        encode_answer(question, TOO_EARLY)
    assert encode_answer(question, TOO_EARLY, allow_too_soon=True) == TOO_SOON_ANSWER
    assert TOO_SOON_ANSWER.hex() == "ff" * 31 + "fe"
    with pytest.raises(RealityQuestionError, match="a bool question takes YES, NO or INVALID"):
        encode_answer(question, "Maybe")
    assert decode_answer(question, word(1)).outcome == YES
    assert decode_answer(question, word(0)).outcome == NO
    assert decode_answer(question, INVALID_ANSWER).outcome == INVALID
    assert decode_answer(question, TOO_SOON_ANSWER).outcome == TOO_EARLY
    with pytest.raises(RealityQuestionError, match="2 is not a bool answer"):
        decode_answer(question, word(2))
    with pytest.raises(RealityQuestionError, match="answer: 31 bytes, expected 32"):
        decode_answer(question, b"\x00" * 31)


def test_select_answers() -> None:
    text = 'T␟"Brazil","France","Other"␟c␟en'
    single = parse_question(2, text)
    assert encode_answer(single, "France") == word(1)
    assert encode_answer(single, "other") == word(2)  # case-insensitive when unambiguous
    with pytest.raises(RealityQuestionError, match="'Spain' is not an outcome"):
        encode_answer(single, "Spain")
    assert decode_answer(single, word(0)).outcome == "Brazil"
    with pytest.raises(RealityQuestionError, match="index 3 is past the 3 outcomes"):
        decode_answer(single, word(3))
    ambiguous = parse_question(2, 'T␟"Yes","YES"␟c␟en')
    assert encode_answer(ambiguous, "YES") == word(1)
    with pytest.raises(RealityQuestionError, match="matches two outcomes ignoring case"):
        encode_answer(ambiguous, "yes")
    multiple = parse_question(3, text)
    assert encode_answer(multiple, ["Brazil", "Other"]) == word(0b101)
    assert decode_answer(multiple, word(0b101)).selected == ("Brazil", "Other")
    with pytest.raises(RealityQuestionError, match="selects past the 3 outcomes"):
        decode_answer(multiple, word(0b1000))
    with pytest.raises(RealityQuestionError, match="takes a list of labels"):
        encode_answer(multiple, "Brazil")


def test_uint_and_datetime_answers() -> None:
    uint = parse_question(1, "How many?␟c␟en", templates=ALL_TEMPLATES)
    assert encode_answer(uint, 3) == word(3 * 10**18)
    assert encode_answer(uint, "2.5") == word(25 * 10**17)
    assert encode_answer(uint, Decimal("0.000000000000000001")) == word(1)
    with pytest.raises(RealityQuestionError, match="more than 18 decimals"):
        encode_answer(uint, "0.0000000000000000001")
    with pytest.raises(RealityQuestionError, match="number >= 0"):
        encode_answer(uint, -1)
    with pytest.raises(RealityQuestionError, match="too large"):
        encode_answer(uint, 2**256)
    assert decode_answer(uint, word(7)).value == 7
    when = parse_question(4, "When?␟c␟en", templates=ALL_TEMPLATES)
    assert encode_answer(when, 1_780_000_000) == word(1_780_000_000)
    with pytest.raises(RealityQuestionError, match="Unix seconds"):
        encode_answer(when, "tomorrow")
    with pytest.raises(RealityQuestionError, match="reserved"):
        encode_answer(when, 2**256 - 1)


@settings(max_examples=200, deadline=None)
@given(count=st.integers(2, MAX_OUTCOMES), data=st.data())
def test_select_answers_round_trip(count: int, data: st.DataObject) -> None:
    outcomes = [f"o{i}" for i in range(count)]
    text = encode_question_text(QuestionKind.MULTIPLE_SELECT, "T", outcomes=outcomes)
    single = parse_question(2, text)
    index = data.draw(st.integers(0, count - 1))
    assert decode_answer(single, encode_answer(single, outcomes[index])).outcome == outcomes[index]
    multiple = parse_question(3, text)
    chosen = data.draw(st.lists(st.sampled_from(outcomes), min_size=1, unique=True))
    decoded = decode_answer(multiple, encode_answer(multiple, chosen))
    assert set(decoded.selected) == set(chosen)


# --- bonds ----------------------------------------------------------------------------------


def test_the_bond_rule() -> None:
    assert minimum_next_bond(0, 0) == 1
    assert minimum_next_bond(0, 10**18) == 10**18
    assert minimum_next_bond(10**18, 10**18) == 2 * 10**18
    assert bond_accepts(10**18, 0, 10**18)
    assert not bond_accepts(10**18 - 1, 0, 10**18)
    assert not bond_accepts(0, 0, 0)
    assert bond_accepts(2 * 10**18, 10**18, 10**18)
    assert not bond_accepts(2 * 10**18 - 1, 10**18, 10**18)
    with pytest.raises(ValueError, match="never negative"):
        minimum_next_bond(-1, 0)


@given(current=st.integers(0, 2**200), min_bond=st.integers(0, 2**200), bond=st.integers(0, 2**202))
def test_the_next_bond_is_the_smallest_the_contract_takes(
    current: int, min_bond: int, bond: int
) -> None:
    if current and current < min_bond:
        current = min_bond  # once answered, the bond is at least min_bond
    smallest = minimum_next_bond(current, min_bond)
    assert bond_accepts(smallest, current, min_bond)
    assert not bond_accepts(smallest - 1, current, min_bond)
    assert bond_accepts(bond, current, min_bond) == (bond >= smallest)


# --- ids and history ------------------------------------------------------------------------


def test_question_id_is_the_contracts_packing() -> None:
    text = "T␟c␟en"
    expected_content = keccak(word(0) + (5).to_bytes(4, "big") + text.encode())
    assert content_hash(0, 5, text) == expected_content
    qid = question_id(
        template_id=0,
        opening_ts=5,
        question=text,
        arbitrator=ALICE,
        timeout=60,
        min_bond=0,
        contract=BOB,
        asker=CAROL,
        nonce=1,
    )
    packed = (
        expected_content
        + bytes.fromhex("a1" * 20)
        + (60).to_bytes(4, "big")
        + word(0)
        + bytes.fromhex("b2" * 20)
        + bytes.fromhex("c3" * 20)
        + word(1)
    )
    assert qid == keccak(packed)


def entries_of(*rows: tuple[int, int, str]) -> list[HistoryEntry]:
    return [HistoryEntry(word(answer), bond, who) for answer, bond, who in rows]


def test_history_hash_and_claim_arguments_newest_first() -> None:
    entries = entries_of((1, 10, ALICE), (0, 20, BOB), (1, 40, ALICE))
    first = keccak(NULL_HASH + word(1) + word(10) + bytes.fromhex("a1" * 20) + b"\x00")
    assert history_hash(NULL_HASH, entries[0]) == first
    hashes = history_hashes(entries)
    assert hashes[0] == first
    claim = claim_arguments(entries, hashes[-1])
    assert claim.history_hashes == (hashes[1], hashes[0], NULL_HASH)
    assert claim.addrs == (ALICE, BOB, ALICE)
    assert claim.bonds == (40, 20, 10)
    assert claim.answers == (word(1), word(0), word(1))
    # Walking back as the contract does reaches the null hash.
    current = hashes[-1]
    for before, who, bond, answer in zip(*claim.args(b"q")[1:], strict=True):
        assert history_hash(before, HistoryEntry(answer, bond, who)) == current
        current = before
    assert current == NULL_HASH
    # After a partial claim: the walk starts where the contract's hash now is.
    partial = claim_arguments(entries, hashes[0])
    assert partial.bonds == (10,)
    with pytest.raises(ValueError, match="history is incomplete"):
        claim_arguments(entries[:2], hashes[-1])
    with pytest.raises(ValueError, match="claimed already"):
        claim_arguments(entries, NULL_HASH)
    commitment = HistoryEntry(word(9), 5, ALICE, is_commitment=True)
    assert history_hash(NULL_HASH, commitment) != history_hash(
        NULL_HASH, HistoryEntry(word(9), 5, ALICE)
    )


def test_claim_payouts_mirror_the_contract() -> None:
    # Alice answers Yes (10), Bob No (20), Alice Yes again (40): Alice takes everything,
    # less 1/40 of each bond that is not the final one.
    entries = entries_of((1, 10, ALICE), (0, 20, BOB), (1, 40, ALICE))
    payouts = claim_payouts(entries, best_answer=word(1), final_bond=40, bounty=3)
    assert payouts == {ALICE: 3 + 40 + (20 - 20 // 40) + (10 - 10 // 40)}
    # Bob No (1000), Alice Yes (2000), Carol Yes (4000): Carol is paid her bond less what
    # Alice takes over (her own bond's worth); Alice then collects her bond and Bob's.
    entries = entries_of((0, 1000, BOB), (1, 2000, ALICE), (1, 4000, CAROL))
    payouts = claim_payouts(entries, best_answer=word(1), final_bond=4000)
    assert payouts == {CAROL: 4000 - 2000, ALICE: 2000 + (2000 - 50) + (1000 - 25)}
    assert sum(payouts.values()) == 7000 - 50 - 25  # 1/40 of the bonds below the last
    # An arbitrator's ruling (bond 0) for the requester, who answered nothing.
    entries = entries_of((1, 10, ALICE), (0, 20, BOB), (0, 0, BOB))
    payouts = claim_payouts(entries, best_answer=word(0), final_bond=20)
    assert payouts == {BOB: 20 + (10 - 10 // 40)}
    # An unrevealed commitment is wrong; a revealed one counts as its answer.
    commitment = HistoryEntry(word(77), 20, ALICE, is_commitment=True)
    entries = [HistoryEntry(word(1), 10, BOB), commitment]
    assert claim_payouts(entries, best_answer=word(1), final_bond=20) == {BOB: 20 + 10}
    revealed = claim_payouts(
        entries, best_answer=word(1), final_bond=20, revealed={word(77): word(1)}
    )
    assert revealed == {ALICE: 20 - 10, BOB: 10 + 10}


def test_phase() -> None:
    def at(now: int, **fields: int | bool) -> Phase:
        base: dict[str, int | bool] = {
            "timeout": 60,
            "opening_ts": 0,
            "finalize_ts": 0,
            "pending_arbitration": False,
        }
        base.update(fields)
        return phase(now=now, **base)  # type: ignore[arg-type]

    assert at(100, timeout=0) == Phase.NOT_ASKED
    assert at(100, opening_ts=101) == Phase.NOT_OPEN
    assert at(100, opening_ts=100) == Phase.OPEN
    assert at(100, finalize_ts=101) == Phase.OPEN
    assert at(100, finalize_ts=100) == Phase.FINALIZED
    assert at(100, finalize_ts=101, pending_arbitration=True) == Phase.PENDING_ARBITRATION


def test_position_bonds_at_risk_and_claimable() -> None:
    entries = entries_of((1, 1000, ALICE), (0, 2000, BOB), (1, 4000, ALICE))
    alice = position(
        entries, ALICE.upper().replace("0X", "0x"), best_answer=word(1), final_bond=4000
    )
    assert alice.posted == 5000
    assert alice.at_risk == 0
    assert alice.claimable == 4000 + (2000 - 50) + (1000 - 25)
    bob = position(entries, BOB, best_answer=word(1), final_bond=4000)
    assert (bob.posted, bob.at_risk, bob.claimable) == (2000, 2000, 0)
    # Were Bob's answer to stand (arbitration), Alice's bonds would be the ones at risk.
    alice_lost = position(entries, ALICE, best_answer=word(0), final_bond=4000)
    assert (alice_lost.at_risk, alice_lost.claimable) == (5000, 0)


def test_commitment_packing() -> None:
    hashed = answer_hash(word(1), 42)
    assert hashed == keccak(word(1) + word(42))
    assert commitment_id(b"q" * 32, hashed, 10) == keccak(b"q" * 32 + hashed + word(10))
