"""The outcome names every part of the core shares, and the venue policy on INVALID.

A binary market's outcomes are `YES` and `NO`; a categorical market names its own. Two
names are reserved (no market may use them as a label):

- `UNDETERMINED`: an agent's "the event cannot be decided yet"; open to every agent.
- `INVALID`: the question has no Yes/No answer by its own terms (a game canceled, or
  postponed beyond what the market's rules allow; a question unresolvable as written). A
  venue that takes such an answer (UMA's 50-50 price, Reality.eth's `0xff…ff`) opens it to
  the agents (`Market.invalid` is that venue's :data:`InvalidPolicy`), under the same
  evidence rules as any outcome. The consensus also produces it, with an `invalid_reason`,
  when too few trustworthy answers remain to decide anything: that one always goes to a
  person.

Its own module (no imports) so that `models` and `timing`, which `models` imports, read
the same set.
"""

from __future__ import annotations

from typing import Literal

YES = "YES"
NO = "NO"
UNDETERMINED = "UNDETERMINED"
INVALID = "INVALID"
BINARY_OUTCOMES = (YES, NO)
RESERVED_OUTCOMES = frozenset({UNDETERMINED, INVALID})

# What a venue does with the agents' agreed INVALID: answer it as any verdict the policy
# lets through (`propose`), or always hand it to a person first (`review`).
InvalidPolicy = Literal["propose", "review"]
INVALID_POLICIES: tuple[InvalidPolicy, ...] = ("propose", "review")
