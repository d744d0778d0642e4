from __future__ import annotations

import time

import pytest

from oracle.venues.own.venue import split_outcomes

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


def test_blank_lines_before_the_outcomes_line_are_the_question_s_end() -> None:
    text = "Who won?\n\n \n  Outcomes: Alice | Bob | Carol"
    assert split_outcomes(text, INDICES) == ("Who won?", ("Alice", "Bob", "Carol"))


def test_a_question_of_many_lines_is_split_in_linear_time() -> None:
    # Anyone can ask on-chain; '\n' * 100,000 took minutes with `\n\s*outcomes`, in the
    # daemon's event loop.
    started = time.perf_counter()
    assert split_outcomes("Q?" + "\n" * 100_000, INDICES) == ("Q?" + "\n" * 100_000, INDICES)
    assert time.perf_counter() - started < 2.0
