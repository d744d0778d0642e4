"""The OOv3 claim text: readable, bounded, and naming the proof."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.claims import (
    MAX_CLAIM_BYTES,
    MAX_QUESTION_CHARS,
    MAX_SHOWN_CLAIM_CHARS,
    assertion_claim,
    read_claim,
)

CHECKSUM = "ab" * 32


def test_the_claim_names_market_answer_and_proof() -> None:
    claim = assertion_claim(
        market_id="uma:0x12", question="Will it rain?", outcome="YES", proof_checksum=CHECKSUM
    )
    assert (
        claim
        == (
            f'The answer to "Will it rain?" (market uma:0x12) is YES. Proof: sha256:{CHECKSUM}.'
        ).encode()
    )


def test_hostile_questions_are_flattened_and_bounded() -> None:
    question = 'Line one\nLine "two"\x00\u202e\t' + "x" * 5000
    claim = assertion_claim(
        market_id="m", question=question, outcome="NO", proof_checksum="0x" + CHECKSUM.upper()
    ).decode()
    assert claim.isprintable()  # no newline, NUL or direction override left
    assert "Line one Line 'two' x" in claim
    assert claim.endswith(f"is NO. Proof: sha256:{CHECKSUM}.")
    assert len(claim) < MAX_QUESTION_CHARS + 200


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"market_id": "a b"}, "market_id"),
        ({"outcome": "YES\nNO"}, "outcome"),
        ({"proof_checksum": "cd" * 31}, "proof_checksum"),
        ({"question": "\x00\n\t"}, "question"),
    ],
)
def test_unusable_arguments_are_named(arguments: dict[str, str], message: str) -> None:
    values = {"market_id": "m", "question": "q?", "outcome": "YES", "proof_checksum": CHECKSUM}
    with pytest.raises(ValueError, match=f"^{message}:"):
        assertion_claim(**{**values, **arguments})


@given(st.text(max_size=3000))
def test_any_question_gives_a_bounded_single_line_claim(question: str) -> None:
    if not "".join(question.split()).isprintable() or not question.strip():
        return  # may flatten to nothing: the error case is tested above
    claim = assertion_claim(
        market_id="m", question=question, outcome="YES", proof_checksum=CHECKSUM
    ).decode()
    assert claim.isprintable()
    assert len(claim) <= MAX_QUESTION_CHARS + 120
    assert claim.endswith(f"Proof: sha256:{CHECKSUM}.")


def test_someone_elses_claim_is_read_as_one_bounded_line() -> None:
    assert (
        read_claim(b'The bridge "reopened"\n on\t3 March.') == "The bridge 'reopened' on 3 March."
    )
    assert read_claim(b"caf\xc3\xa9 \xff ok") == "caf\u00e9 \ufffd ok"  # bad UTF-8 replaced
    long = read_claim(b"x " * MAX_CLAIM_BYTES)
    assert len(long) == MAX_SHOWN_CLAIM_CHARS
    assert long.endswith("\u2026")
    for unreadable in (b"", b"\x00\x01\n", b"\xff\xfe\x7f"):
        with pytest.raises(ValueError, match=r"^claim: no readable text"):
            read_claim(unreadable)


def _read(raw: bytes) -> tuple[str | None, str | None]:
    try:
        return read_claim(raw), None
    except ValueError as error:
        return None, str(error)


@given(st.binary(max_size=20_000))
def test_any_claim_bytes_give_a_bounded_line_or_a_named_error(raw: bytes) -> None:
    text, error = _read(raw)
    if text is None:
        assert error == "claim: no readable text"
        return
    assert text.isprintable()
    assert 0 < len(text) <= MAX_SHOWN_CLAIM_CHARS
