from __future__ import annotations

import pytest

from oracle.daemon.chain_venue import split_outcomes

INDICES = ("0", "1", "2")


@pytest.mark.parametrize(
    ("text", "question", "outcomes"),
    [
        ("Who won?\nOutcomes: Alice | Bob | Carol", "Who won?", ("Alice", "Bob", "Carol")),
        ("Who won?\n  outcomes:  Alice|Bob|Carol  ", "Who won?", ("Alice", "Bob", "Carol")),
        ("Who won?\nOutcomes: Alice | Bob", "Who won?\nOutcomes: Alice | Bob", INDICES),
        (
            "Who won?\nOutcomes: Alice | Alice | Bob",
            "Who won?\nOutcomes: Alice | Alice | Bob",
            INDICES,
        ),
        ("Who won?\nOutcomes: Alice |  | Bob", "Who won?\nOutcomes: Alice |  | Bob", INDICES),
        (
            "Outcomes: Alice | Bob | Carol, who won?",
            "Outcomes: Alice | Bob | Carol, who won?",
            INDICES,
        ),
        ("Who won?", "Who won?", INDICES),
    ],
)
def test_outcome_names_from_the_last_line(
    text: str, question: str, outcomes: tuple[str, ...]
) -> None:
    assert split_outcomes(text, INDICES) == (question, outcomes)
